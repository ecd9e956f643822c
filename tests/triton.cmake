# tests/triton: the Triton corpus (tests/triton/kernels.py and tests/import/kernels.py) through the
# Python binding. triton/corpus runs every committed TTIR fixture on interp and cpu against NumPy
# (no Triton needed); triton/tool runs python3 -m tri.triton (bindings/python/src/tri/triton/)
# and is reported as skipped where no python3 has Triton (pip install triton). triton/replay
# replays the committed capture (tests/triton/capture/) on cpu and interp (no Triton needed);
# triton/capture captures capture_program.py through Triton's runtime without a GPU (skipped
# without Triton); triton/capture_gpu compares Tri with Triton on a GPU (skipped without one).
foreach(what corpus tool replay capture capture_gpu)
  add_test(NAME triton/${what} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/triton/run.sh ${what})
  set_tests_properties(triton/${what} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                       LABELS triton TIMEOUT 900)
endforeach()
set_tests_properties(triton/tool triton/capture PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: triton not installed")
set_tests_properties(triton/capture_gpu PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: no CUDA device")
