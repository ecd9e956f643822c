# Tests that need NVIDIA's tools or a GPU say why they did not run ("skipped: no ptxas",
# "skipped: no CUDA device"); CTest reports them as skipped, never as passed.
if(TEST codegen/test_nvptx_ptxas)
  set_tests_properties(codegen/test_nvptx_ptxas PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: no ptxas" TIMEOUT 900)
endif()
if(TEST capi/test_cuda)
  set_tests_properties(capi/test_cuda PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: no CUDA device")
endif()
add_test(NAME tool/compile COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/compile_test.sh)
set_tests_properties(tool/compile PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME tool/conformance_ptxas COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/conformance_ptxas.sh)
set_tests_properties(tool/conformance_ptxas PROPERTIES
                     ENVIRONMENT "${TRI_TEST_ENV};TRI_CONFORMANCE=$<TARGET_FILE:conformance>" LABELS tool
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} SKIP_REGULAR_EXPRESSION "skipped: no ptxas" TIMEOUT 900)
if(TEST codegen/test_nvshmem_link)
  set_tests_properties(codegen/test_nvshmem_link PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: no NVSHMEM device library")
endif()
add_test(NAME tool/tune_cuda COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/tune_cuda_test.sh)
set_tests_properties(tool/tune_cuda PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} SKIP_REGULAR_EXPRESSION "skipped: no CUDA device")
