# libtri.so exports the C API and nothing else (no LLVM, no libstdc++), and every function tri.h
# declares is exported.
add_test(NAME capi/exports
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check_exports.sh $<TARGET_FILE:tri>
                 ${PROJECT_SOURCE_DIR}/include/tri/tri.h)
set_tests_properties(capi/exports PROPERTIES LABELS capi)
