# tests/corpus: Triton kernels written elsewhere, as their authors launch them: Triton's own
# tutorials (tests/corpus/tutorials) and FlagGems' operators (tests/corpus/flaggems). Each corpus
# runs its committed TTIR fixtures on interp (checked) and cpu against NumPy, with the failures
# tests/corpus/expected_failures.json lists expected exactly (tests/corpus/test_corpus.py); NumPy and
# pytest only, never Triton or torch. One CTest test per corpus, so -j2 runs them side by side.
foreach(corpus tutorials flaggems)
  add_test(NAME corpus/${corpus} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/triton/run.sh ${corpus})
  set_tests_properties(corpus/${corpus} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                       LABELS corpus TIMEOUT 900)
endforeach()
# corpus/descriptors: host-side TensorDescriptor arguments as bench/gpu/triton_corpus.py passes them to
# Tri and to Triton (tests/corpus/test_descriptors.py); its Triton part is skipped without Triton.
add_test(NAME corpus/descriptors COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/triton/run.sh descriptors)
set_tests_properties(corpus/descriptors PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                     LABELS corpus TIMEOUT 300 SKIP_REGULAR_EXPRESSION "skipped: triton not installed")
