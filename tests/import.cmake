# tests/import: the TTIR importer (src/import/triton, docs/import.md). test_ttir_reader is a unit
# test of the reader (errors, locations, detection); test_ttir_run runs the imported fixtures
# (tests/import/ttir, written from kernels.py by python3 -m tri.triton) through the public API on
# the interpreter and the CPU; test_ttir_cfg (early returns: cf.br / cf.cond_br) and test_ttir_ops
# (tensor descriptors, gather, clamp, exp2, libdevice, ...) run TTIR snippets the same way.
tri_add_test(${CMAKE_CURRENT_SOURCE_DIR}/import/test_ttir_run.cpp tri)
tri_add_test(${CMAKE_CURRENT_SOURCE_DIR}/import/test_ttir_cfg.cpp tri)
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/import/test_ttir_reader.cpp)
  tri_add_test(${CMAKE_CURRENT_SOURCE_DIR}/import/test_ttir_reader.cpp tri_internal)
endif()
add_test(NAME import/tool_import COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/import/tool_import.sh)
set_tests_properties(import/tool_import PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS import
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
