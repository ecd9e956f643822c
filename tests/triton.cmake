# tests/triton: the Triton corpus (tests/triton/kernels.py and tests/import/kernels.py) through the
# Python binding. triton/corpus runs every committed TTIR fixture on interp and cpu against NumPy
# (no Triton needed); triton/tool runs python3 -m tri.triton (bindings/python/src/tri/triton.py)
# and is reported as skipped where no python3 has Triton (pip install triton).
foreach(what corpus tool)
  add_test(NAME triton/${what} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/triton/run.sh ${what})
  set_tests_properties(triton/${what} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_LIB=$<TARGET_FILE:tri>"
                       LABELS triton TIMEOUT 900)
endforeach()
set_tests_properties(triton/tool PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: triton not installed")
