# The documentation's command samples run and print what the pages show (tests/docs/check_samples.py:
# the samples marked `<!-- doc-test -->` in README.md and docs/*.md).
find_package(Python3 COMPONENTS Interpreter QUIET)
add_test(NAME docs/samples COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/docs/check_samples.py)
set_tests_properties(docs/samples PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS docs
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# bench/results/README.md and its charts are what bench/results_index.py writes from the tables there.
add_test(NAME docs/bench_results_index COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/results_index.py --check)
set_tests_properties(docs/bench_results_index PROPERTIES LABELS docs)
# The house's shape (tests/docs/layout_test.sh): README's layout names every folder of src/, each
# target's folder is in docs/architecture.md, and src/capi reaches targets only through target.h.
add_test(NAME docs/layout COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/layout_test.sh WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(docs/layout PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS docs)
