# libtri_rt, the runtime half (docs/aot.md): what ldd and nm say of it, its exports and size
# (tests/rt/library_test.sh), tri.h's marks of the compiler's functions (tests/rt/header_test.sh),
# `tri aot`'s host program linked with it (tests/tool/aot_test.sh), and every example's C program
# built against it (TRI_RUNTIME_ONLY, examples/c/common.h) running from the packages the
# aot/examples_cpu fixture makes (tests/aot.cmake).
add_test(NAME rt/library COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rt/library_test.sh $<TARGET_FILE_DIR:tri_rt>)
add_test(NAME rt/header COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rt/header_test.sh)
add_test(NAME tool/aot_rt COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/aot_test.sh $<TARGET_FILE_DIR:tri_rt> tri_rt)
# The same under the fake CUDA driver: libtri_rt's cuda half picks a package's PTX, loads and launches.
add_test(NAME tool/aot_rt_fake COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/aot_test.sh $<TARGET_FILE_DIR:tri_rt> tri_rt)
set_tests_properties(rt/library rt/header tool/aot_rt PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS rt
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(tool/aot_rt_fake PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIBCUDA=$<TARGET_FILE:fake_libcuda>"
                     LABELS rt WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_dependencies(tri-tool tri_rt tri_rt_static)  # the tests above read both libraries

foreach(name vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax
             allgather_gemm gemm_reduce_scatter)
  add_executable(example_rt_${name} ${PROJECT_SOURCE_DIR}/examples/c/${name}.c)
  target_compile_definitions(example_rt_${name} PRIVATE _GNU_SOURCE)
  target_link_libraries(example_rt_${name} PRIVATE tri_rt m ${CMAKE_DL_LIBS})
  add_test(NAME examples/${name}/cpu/runtime COMMAND example_rt_${name})
  set_tests_properties(examples/${name}/cpu/runtime PROPERTIES
                       ENVIRONMENT "TRI_TARGET=cpu;TRI_RANKS=2;TRI_PACKAGE_DIR=${PROJECT_BINARY_DIR}/aot-examples"
                       LABELS "examples;rt" FIXTURES_REQUIRED aot_examples)
endforeach()
