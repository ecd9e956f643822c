# The language bindings (bindings/): each one's tests run against this build's libtri.so
# (tests/bindings/run.sh finds the toolchain or fails saying which Debian package is missing),
# plus the checks that keep them in step with include/tri/tri.h: tri-sys is generated from the
# current header, every header function is bound in every language or listed as deliberately
# unbound, and every Julia ccall matches the header. Python runs twice: with its compiled launch
# path (tri/_launch.c) and on the pure-Python one. launch-bench builds and briefly runs the launch
# benchmark of every language (bench/launch). The packaging checks take a binding out of the
# repository (rust-package: the packaged crates' tests; go-module: the module used by its path from
# another module; the Python wheel's is among the Python tests).
foreach(what rust rust-sys rust-package python python-pure go go-module julia coverage tools launch-bench)
  set(name bindings/${what})
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bindings/run.sh ${what})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                       LABELS bindings TIMEOUT 900)
endforeach()
# The Rust tests share the bindings/rust workspace: `cargo package` verifies that nothing changes
# the package's sources while it builds, which a concurrent `cargo test` in the same workspace
# can break (a CI run with -j2 failed so), so they do not run at the same time.
set_tests_properties(bindings/rust bindings/rust-sys bindings/rust-package PROPERTIES RESOURCE_LOCK bindings_rust_workspace)
