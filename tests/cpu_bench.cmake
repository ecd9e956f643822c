# The CPU backend's benchmark (tests/target/cpu/bench_cpu.cpp): built with optimization whatever the
# build type, so the C reference it compares against is fair. CTest runs it in --quick mode
# (results are checked, nothing is timed against a bound); run it by hand for the table.
if(TARGET tri_internal_llvm)
  add_executable(cpu_bench ${CMAKE_CURRENT_SOURCE_DIR}/target/cpu/bench_cpu.cpp)
  target_include_directories(cpu_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/target/cpu)
  target_compile_options(cpu_bench PRIVATE -O2)
  target_link_libraries(cpu_bench PRIVATE tri_internal_llvm)
  add_test(NAME cpu/cpu_bench_quick COMMAND cpu_bench --quick WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cpu/cpu_bench_quick PROPERTIES LABELS cpu)
endif()
