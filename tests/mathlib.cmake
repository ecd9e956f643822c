# The math library's host test links the library's C sources built for the host
# (cmake/mathlib.cmake), and its 2/pi table is recomputed by gen_tables.py.
if(TARGET codegen_test_mathlib)
  target_link_libraries(codegen_test_mathlib PRIVATE tri_mathlib_host)
endif()
add_test(NAME codegen/mathlib_tables COMMAND python3 ${PROJECT_SOURCE_DIR}/src/codegen/mathlib/gen_tables.py --check)
set_tests_properties(codegen/mathlib_tables PROPERTIES LABELS codegen)
