# IR files that execute: every tests/run/*.tri runs its `// run:` lines with `tri test` on every
# target present. Then tests of the `tri run` and `tri test` commands themselves: outputs saved
# as .npy and read back, usage errors, and a file of run lines that must each fail.
# The commands live in tools/cmd_run.cpp and tools/cmd_test.cpp; until tools/tri.cpp dispatches
# to them there is nothing to test.
file(READ ${PROJECT_SOURCE_DIR}/tools/tri.cpp TRI_TOOL_MAIN)
if(NOT TRI_TOOL_MAIN MATCHES "tri_cmd_test" OR NOT TRI_TOOL_MAIN MATCHES "tri_cmd_run")
  message(STATUS "Tri: tools/tri.cpp does not dispatch 'run' and 'test' yet; tests/run/*.tri are not registered")
  return()
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tools/tri.cpp)
file(GLOB TRI_RUN_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/run/*.tri)
foreach(f ${TRI_RUN_FILES})
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME run/${name} COMMAND tri-tool test ${f} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(run/${name} PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS run
                       PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")
endforeach()

set(TRI_TOOL_OUT ${CMAKE_CURRENT_BINARY_DIR}/tool_out)
file(MAKE_DIRECTORY ${TRI_TOOL_OUT})
set(vadd ${CMAKE_CURRENT_SOURCE_DIR}/run/vadd.tri)

# tri run: filled and iota inputs on every host target, the output saved as .npy ...
foreach(target interp cpu)
  add_test(NAME tool/run_vadd_${target}
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--target;${target};--grid;4,1,1;--const;BLOCK=256;--arg;x=fill:f32[1000]:1.5;--arg;y=iota:f32[1000];--arg;out=zeros:f32[1000];--arg;n=1000;--save;out=${TRI_TOOL_OUT}/vadd_${target}.npy"
                   -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on ${target}, grid \\(4,1,1\\): compile [0-9.]+ ms, launch [0-9.]+ ms;%out +f32\\[1000\\] +min 1.5  max 1000.5;saved %out"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
  set_tests_properties(tool/run_vadd_${target} PROPERTIES LABELS tool FIXTURES_SETUP vadd_npy_${target})
  # ... and read back as an input: (x + y) - 1.5 = y again.
  add_test(NAME tool/run_npy_input_${target}
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel=vadd;--target=${target};--grid=1000;--const;BLOCK=1;--arg;x=npy:${TRI_TOOL_OUT}/vadd_${target}.npy;--arg;y=fill:f32[1000]:-1.5;--arg;out=rand:f32[1000]:seed=3;--arg;n=i32:1000;--repeat;3"
                   -DEXPECT_RC=0 "-DEXPECT_OUT=%out +f32\\[1000\\] +min 0  max 999  mean 499.5;median"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
  set_tests_properties(tool/run_npy_input_${target} PROPERTIES LABELS tool FIXTURES_REQUIRED vadd_npy_${target})
endforeach()

# tri run: mistakes are named.
# Each case: the arguments (separated by spaces) | a regex the message must match.
set(bad_runs
    "--arg nope=i32:1|has no runtime parameter %nope"
    "--arg x=fill:f16[4]:1|%x is ptr<f32> but was given a buffer of f16\\[4\\]"
    "--arg x=fill:f32[4]:1 --arg y=fill:f32[4]:1 --arg out=zeros:f32[4]|missing argument %n: i32"
    "--arg n=zeros:f32[4]|%n is i32, a scalar"
    "--const NOPE=3|has no constexpr 'NOPE' \\(it has: BLOCK\\)"
    "--arg x=npy:/nonexistent.npy|/nonexistent.npy: No such file"
    "--arg x=rand:f32[4]:seed=1:bogus=2|unknown option 'bogus'"
    "--grid 0|bad --grid")
set(i 0)
foreach(case IN LISTS bad_runs)
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} args)
  math(EXPR after "${bar} + 1")
  string(SUBSTRING "${case}" ${after} -1 regex)
  string(REPLACE " " ";" args "${args}")
  add_test(NAME tool/run_usage_error_${i}
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--target;interp;${args}"
                   -DEXPECT_RC=2 "-DEXPECT_OUT=${regex}" -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
  set_tests_properties(tool/run_usage_error_${i} PROPERTIES LABELS tool)
  math(EXPR i "${i} + 1")
endforeach()

# tri test: every failing run line is caught, with its reason, and the command exits 1.
add_test(NAME tool/test_reports_failures
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;test;${CMAKE_CURRENT_SOURCE_DIR}/tool/fails.tri"
                 -DEXPECT_RC=1
                 "-DEXPECT_OUT=FAIL [^\n]*fails.tri:6:[^\n]*1 element differs;%y\\[2\\] = 3.0, expected 4.0;%y\\[2\\] = 3.0001, expected 3.0;missing argument %y: ptr<f32>;%x is ptr<f32> but was given a buffer of f16\\[3\\];has no constexpr 'NOPE';expected TRI_ERROR_RUNTIME, got success;fails.tri:12:[0-9]+: error: expected ',' or '\\)' after an argument;PASS [^\n]*fails.tri:14:;[0-9]+ passed, [0-9]+ failed"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/test_reports_failures PROPERTIES LABELS tool)
