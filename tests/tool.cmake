# Tests of the `tri` command (tests/capi/tool_test.sh): check, fmt, convert and info on every
# example, located errors for bad input, usage and help, standard input.
file(GLOB _tri_examples CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/*.tri)
foreach(_ex ${_tri_examples})
  get_filename_component(_name ${_ex} NAME_WE)
  add_test(NAME tool/example/${_name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/capi/tool_test.sh example ${_ex})
  list(APPEND _tri_tool_tests tool/example/${_name})
endforeach()
# The examples are in canonical form (docs/ir.md, "Layout"): `tri fmt` leaves them as they are.
add_test(NAME tool/fmt_examples COMMAND tri-tool fmt --check ${_tri_examples})
list(APPEND _tri_tool_tests tool/fmt_examples)
# The same on the IR files that execute: formatted in place, their run lines still all pass.
file(GLOB _tri_run_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/run/*.tri)
foreach(_f ${_tri_run_files})
  get_filename_component(_name ${_f} NAME_WE)
  add_test(NAME tool/run_file/${_name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/capi/tool_test.sh example ${_f})
  list(APPEND _tri_tool_tests tool/run_file/${_name})
endforeach()
foreach(_mode errors usage stdin)
  add_test(NAME tool/${_mode} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/capi/tool_test.sh ${_mode})
  list(APPEND _tri_tool_tests tool/${_mode})
endforeach()
set_tests_properties(${_tri_tool_tests} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# `tri cache` (tests/tool/cache_test.sh): every subcommand on a directory `tri test` fills.
add_test(NAME tool/cache COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/cache_test.sh)
set_tests_properties(tool/cache PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# Golden output of the `tri` command (tests/tool/cli_golden.sh): hints, progress, listings.
file(GLOB _tri_cli_goldens CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/golden/cli/*.cmd)
foreach(_g ${_tri_cli_goldens})
  get_filename_component(_name ${_g} NAME_WE)
  add_test(NAME tool/cli/${_name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tool/cli_golden.sh ${_name})
  set_tests_properties(tool/cli/${_name} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV};TRI_TOOL=$<TARGET_FILE:tri-tool>"
                       LABELS tool)
endforeach()
