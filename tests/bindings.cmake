# The language bindings (bindings/): each one's tests run against this build's libtri.so
# (tests/bindings/run.sh finds the toolchain or fails saying which Debian package is missing),
# each binding's package tests against libtri_rt (the -rt ones), plus the checks that keep them in step with include/tri/tri.h: tri-sys is generated from the
# current header, every header function is bound in every language or listed as deliberately
# unbound, and every Julia ccall matches the header. Python runs twice: with its compiled launch
# path (tri/_launch.c) and on the pure-Python one. launch-bench builds and briefly runs the launch
# benchmark of every language (bench/launch). The packaging checks take a binding out of the
# repository (rust-package: the packaged crates' tests; go-module: the module used by its path from
# another module; the Python wheel's is among the Python tests).
foreach(what rust rust-sys rust-package rust-rt python python-pure python-rt go go-module julia coverage tools launch-bench)
  set(name bindings/${what})
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bindings/run.sh ${what})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                       LABELS bindings TIMEOUT 900)
endforeach()
# Tests that share a binding's source tree do not run at the same time: `cargo package` verifies
# that nothing changes the package's sources while it builds, and the Python wheel test copies
# bindings/python while the other Python run builds its extension there (CI runs at -j2 failed
# bindings/rust-package once and bindings/python once, each passing alone).
set_tests_properties(bindings/rust bindings/rust-sys bindings/rust-package bindings/rust-rt PROPERTIES RESOURCE_LOCK bindings_rust_workspace)
set_tests_properties(bindings/python bindings/python-pure bindings/python-rt PROPERTIES RESOURCE_LOCK bindings_python_tree)
