# Packages (docs/aot.md). `tri aot` itself (tests/tool/aot_test.sh: --list, --header, a host
# program through the header, usage errors), and every example's C program run from packages
# instead of IR (TRI_PACKAGE_DIR, examples/c/common.h): the packages are made once for the CPU by
# scripts/aot-examples.sh (the fixture), then each example checks its results as it does when it
# compiles. GPU machines run the same programs with TRI_TARGET=cuda (docs/aot.md says how).
add_test(NAME tool/aot COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/aot_test.sh $<TARGET_FILE_DIR:tri> tri)
set_tests_properties(tool/aot PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

set(_aot_dir ${PROJECT_BINARY_DIR}/aot-examples)
add_test(NAME aot/examples_cpu
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/aot-examples.sh ${_aot_dir} --target cpu
                 --cpu x86-64-v2,x86-64-v3 --variants aligned)
set_tests_properties(aot/examples_cpu PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS examples
                     FIXTURES_SETUP aot_examples WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
foreach(name vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax)
  add_test(NAME examples/${name}/cpu/package COMMAND example_${name})
  set_tests_properties(examples/${name}/cpu/package PROPERTIES
                       ENVIRONMENT "TRI_TARGET=cpu;TRI_PACKAGE_DIR=${_aot_dir}" LABELS examples
                       FIXTURES_REQUIRED aot_examples)
endforeach()
foreach(name allgather_gemm gemm_reduce_scatter)
  add_test(NAME examples/${name}/cpu/package COMMAND example_${name})
  set_tests_properties(examples/${name}/cpu/package PROPERTIES
                       ENVIRONMENT "TRI_TARGET=cpu;TRI_RANKS=4;TRI_PACKAGE_DIR=${_aot_dir}" LABELS examples
                       FIXTURES_REQUIRED aot_examples)
endforeach()
