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
                   -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on ${target}, grid \\(4,1,1\\): compile [0-9.]+ ms \\([a-z ,]+\\), launch [0-9.]+ ms;%out +f32\\[1000\\] +min 1.5  max 1000.5;saved %out"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
  set_tests_properties(tool/run_vadd_${target} PROPERTIES LABELS tool FIXTURES_SETUP vadd_npy_${target})
  # ... and read back as an input: (x + y) - 1.5 = y again.
  add_test(NAME tool/run_npy_input_${target}
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel=vadd;--target=${target};--grid=1000;--const;BLOCK=1;--arg;x=npy:${TRI_TOOL_OUT}/vadd_${target}.npy;--arg;y=fill:f32[1000]:-1.5;--arg;out=rand:f32[1000]:seed=3;--arg;n=i32:1000;--repeat;3"
                   -DEXPECT_RC=0 "-DEXPECT_OUT=%out +f32\\[1000\\] +min 0  max 999  mean 499.5;median"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
  set_tests_properties(tool/run_npy_input_${target} PROPERTIES LABELS tool FIXTURES_REQUIRED vadd_npy_${target})
endforeach()

# tri run: mistakes are named (a file that cannot be read is an I/O error, exit status 1:
# tests/golden/cli/hint_npy_missing_is_an_io_error).
# Each case: the arguments (separated by spaces) | a regex the message must match.
set(bad_runs
    "--arg nope=i32:1|has no runtime parameter %nope"
    "--arg x=fill:f16[4]:1|%x is ptr<f32> but was given a buffer of f16\\[4\\]"
    "--arg x=fill:f32[4]:1 --arg y=fill:f32[4]:1 --arg out=zeros:f32[4]|missing argument %n: i32"
    "--arg n=zeros:f32[4]|%n is i32, a scalar"
    "--const NOPE=3|has no constexpr 'NOPE' \\(it has: BLOCK\\)"
    "--arg x=rand:f32[4]:seed=1:bogus=2|unknown option 'bogus'"
    "--grid 0|bad --grid")
set(i 0)
foreach(case IN LISTS bad_runs)
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} args)
  math(EXPR after "${bar} + 1")
  string(SUBSTRING "${case}" ${after} -1 regex)
  string(REPLACE " " ";" args "${args}")
  # A usage error is one line and a pointer to --help, not the whole help text.
  add_test(NAME tool/run_usage_error_${i}
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--target;interp;${args}"
                   -DEXPECT_RC=2 "-DEXPECT_OUT=${regex}" "-DREJECT_OUT=Runs kernel @NAME;--repeat N"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
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

# A usage error found while reading the command line: its line, then where the help is.
add_test(NAME tool/run_usage_error_short
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--bogus"
                 -DEXPECT_RC=2 "-DEXPECT_OUT=^tri run: unknown option '--bogus'\n\\(see 'tri run --help'\\)\n$"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/run_usage_error_short PROPERTIES LABELS tool)

# tri run edges (issue 8). --checked alone runs on the interpreter; with another target it is a
# usage error that names the fix.
set(vadd_args "--const;BLOCK=4;--arg;x=fill:f32[4]:1;--arg;y=fill:f32[4]:2;--arg;out=zeros:f32[4];--arg;n=4")
add_test(NAME tool/run_checked_selects_interp
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--checked;${vadd_args}"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on interp;%out +f32\\[4\\] +min 3  max 3"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
add_test(NAME tool/run_checked_other_target
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--checked;--target;cpu;${vadd_args}"
                 -DEXPECT_RC=2 "-DEXPECT_OUT=--checked runs on the interpreter only: use --target interp"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
# An all-NaN buffer is summarized as such, not as "min inf max -inf".
add_test(NAME tool/run_all_nan_summary
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${vadd};--kernel;vadd;--target;interp;--const;BLOCK=4;--arg;x=fill:f32[4]:nan;--arg;y=fill:f32[4]:1;--arg;out=zeros:f32[4];--arg;n=4"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=%out +f32\\[4\\] +all 4 nan"
                 "-DREJECT_OUT=inf" -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
# A NumPy int64 array for a ptr<i32>: refused with the dtype to save and the npy-cast: spelling;
# npy-cast: converts (values must fit).
set(run_edges ${CMAKE_CURRENT_SOURCE_DIR}/tool/run_edges.tri)
add_test(NAME tool/run_save_i64
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${run_edges};--kernel;touch_i64;--target;interp;--arg;a=iota:i64[4]:start=1;--save;a=${TRI_TOOL_OUT}/a_i64.npy"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=saved %a" -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
add_test(NAME tool/run_save_big_i64
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${run_edges};--kernel;touch_i64;--target;interp;--arg;a=iota:i64[4]:start=5000000000;--save;a=${TRI_TOOL_OUT}/big_i64.npy"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=saved %a" -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/run_save_i64 tool/run_save_big_i64 PROPERTIES FIXTURES_SETUP i64_npy)
add_test(NAME tool/run_npy_wrong_dtype
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${run_edges};--kernel;copy_i32;--target;interp;--arg;x=npy:${TRI_TOOL_OUT}/a_i64.npy;--arg;out=zeros:i32[4]"
                 -DEXPECT_RC=2 "-DEXPECT_OUT=a_i64.npy holds int64 data \\(i64\\[4\\]\\) but %x is ptr<i32>: save it as int32 \\(array.astype\\(numpy.int32\\)\\), or give npy-cast:"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
add_test(NAME tool/run_npy_cast
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${run_edges};--kernel;copy_i32;--target;interp;--arg;x=npy-cast:${TRI_TOOL_OUT}/a_i64.npy;--arg;out=zeros:i32[4]"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=%out +i32\\[4\\] +min 1  max 4.*\\[1, 2, 3, 4\\]"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
add_test(NAME tool/run_npy_cast_out_of_range
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${run_edges};--kernel;copy_i32;--target;interp;--arg;x=npy-cast:${TRI_TOOL_OUT}/big_i64.npy;--arg;out=zeros:i32[4]"
                 -DEXPECT_RC=2 "-DEXPECT_OUT=big_i64.npy: element 0 \\(5000000000\\) does not fit i32"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/run_npy_wrong_dtype tool/run_npy_cast tool/run_npy_cast_out_of_range
                     PROPERTIES FIXTURES_REQUIRED i64_npy)
set_tests_properties(tool/run_checked_selects_interp tool/run_checked_other_target tool/run_all_nan_summary
                     tool/run_save_i64 tool/run_save_big_i64 tool/run_npy_wrong_dtype tool/run_npy_cast
                     tool/run_npy_cast_out_of_range PROPERTIES LABELS tool)

# A binary made from a .tri names that file in its run-time errors, with the line and column
# there (docs/format.md, "Source"): the checked-mode error from a .trib points into the .tri.
add_test(NAME tool/trib_from_text
         COMMAND $<TARGET_FILE:tri-tool> convert ${CMAKE_CURRENT_SOURCE_DIR}/run/debug_ops.tri -o ${TRI_TOOL_OUT}/debug_ops.trib)
set_tests_properties(tool/trib_from_text PROPERTIES FIXTURES_SETUP debug_ops_trib LABELS tool)
add_test(NAME tool/trib_error_names_source
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;run;${TRI_TOOL_OUT}/debug_ops.trib;--kernel;out_of_bounds;--checked;--arg;x=zeros:f32[4]"
                 -DEXPECT_RC=1 "-DEXPECT_OUT=tests/run/debug_ops\\.tri:27:9: error: 'load' lane \\[4\\]"
                 "-DREJECT_OUT=debug_ops\\.trib:" -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/trib_error_names_source PROPERTIES FIXTURES_REQUIRED debug_ops_trib LABELS tool)

# tri tune: a config that cannot compile (BLOCK=100 is not a power of two) is skipped and shown
# with its error; the result is stored, so the second run reports it without benchmarking; a
# frozen run with an empty cache directory and the exported result uses it.
set(tune_args "tune;${vadd};--kernel;vadd;--config;BLOCK=256,warps=4,stages=1;--config;BLOCK=100;--config;BLOCK=1024;--arg;x=rand:f32[5000];--arg;y=iota:f32[5000];--arg;out=zeros:f32[5000];--arg;n=5000;--key;n;--bucket;--grid;5000/BLOCK;--repeat;3")
add_test(NAME tool/tune_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${TRI_TOOL_OUT}/tune-cache ${TRI_TOOL_OUT}/tune-empty-cache)
set_tests_properties(tool/tune_clean PROPERTIES LABELS tool FIXTURES_SETUP tune_clean)
add_test(NAME tool/tune_vadd
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;${tune_args};--cache-dir;${TRI_TOOL_OUT}/tune-cache;--retune;--export;${TRI_TOOL_OUT}/tune.json"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on cpu \\(benchmark; key [0-9a-f]+\\);1  BLOCK=100,stages=0 +- +TRI_ERROR_SPECIALIZE;winner: config [02] \\(BLOCK=(256|1024)[,)];exported 1 result"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/tune_vadd PROPERTIES LABELS tool FIXTURES_SETUP tune_vadd FIXTURES_REQUIRED tune_clean)
add_test(NAME tool/tune_vadd_stored
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;${tune_args};--cache-dir;${TRI_TOOL_OUT}/tune-cache"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on cpu \\(stored; key [0-9a-f]+\\);winner: config [02]"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
add_test(NAME tool/tune_vadd_frozen_import
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;${tune_args};--cache-dir;${TRI_TOOL_OUT}/tune-empty-cache;--frozen;--import;${TRI_TOOL_OUT}/tune.json"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=@vadd on cpu \\(imported; key [0-9a-f]+\\);winner: config [02]"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/tune_vadd_stored tool/tune_vadd_frozen_import PROPERTIES LABELS tool FIXTURES_REQUIRED tune_vadd)
# A product of value lists, filtered: BLOCK 64 goes, and so does every config whose warps have
# more threads than BLOCK has elements; 8 configs remain, numbered in product order.
add_test(NAME tool/tune_product
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;tune;${vadd};--kernel;vadd;--values;BLOCK=64,128,256,1024;--warps;1,4,8;--filter;BLOCK >= 128 && warps * 32 <= BLOCK;--arg;x=rand:f32[5000];--arg;y=iota:f32[5000];--arg;out=zeros:f32[5000];--arg;n=5000;--grid;5000/BLOCK;--cache-dir;${TRI_TOOL_OUT}/tune-product-cache;--retune;--repeat;2"
                 -DEXPECT_RC=0 "-DEXPECT_OUT=0  BLOCK=128,warps=1 ;1  BLOCK=128,warps=4 ;2  BLOCK=256,warps=1 ;7  BLOCK=1024,warps=8 ;winner: config [0-7] \\(BLOCK="
                 "-DREJECT_OUT=BLOCK=64|BLOCK=128,warps=8|[ ]8[ ]+BLOCK="
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/tune_product PROPERTIES LABELS tool)
add_test(NAME tool/tune_usage
         COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tri-tool>;tune;${vadd};--kernel;vadd"
                 -DEXPECT_RC=2 "-DEXPECT_OUT=tri tune: no --config or --values given"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/tool/check_output.cmake)
set_tests_properties(tool/tune_usage PROPERTIES LABELS tool)
# tri tune --plot: the space as an SVG heatmap (two values that vary) or bars (one).
add_test(NAME tool/tune_plot COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tool/tune_plot_test.sh)
set_tests_properties(tool/tune_plot PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool)
# tri tune's progress on a terminal: bars redrawn in place (a pseudo-terminal from `script`).
add_test(NAME tool/tune_progress_tty COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tool/tune_progress_tty_test.sh)
set_tests_properties(tool/tune_progress_tty PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS tool)
