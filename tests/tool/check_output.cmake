# Runs one command and checks its exit status and output: a CTest helper for the `tri` tool's
# tests, which must see both (a failing `tri test` must exit 1 *and* say what failed).
#   cmake -DCMD="tri;test;file.tri" -DEXPECT_RC=1 -DEXPECT_OUT="regex;regex" [-DREJECT_OUT="regex;..."]
#         -P check_output.cmake
# REJECT_OUT: regexes the output must not match (a usage error must not print the whole help).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}; output:\n${all}")
endif()
foreach(re IN LISTS EXPECT_OUT)
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "output does not match '${re}':\n${all}")
  endif()
endforeach()
foreach(re IN LISTS REJECT_OUT)
  if(all MATCHES "${re}")
    message(FATAL_ERROR "output matches '${re}', which it must not:\n${all}")
  endif()
endforeach()
message(STATUS "ok:\n${all}")
