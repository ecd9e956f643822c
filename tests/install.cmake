# Installs this build into a temporary prefix and builds an outside project against it, through
# the CMake package and through pkg-config (tests/install/install_test.sh).
set(_tri_consumer_flags "")
if(TRI_SANITIZE)
  set(_tri_consumer_flags "-fsanitize=address,undefined")
endif()
add_test(NAME install/consumer
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install/install_test.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_INSTALL_LIBDIR} ${CMAKE_C_COMPILER} "${_tri_consumer_flags}")
set_tests_properties(install/consumer PROPERTIES LABELS install TIMEOUT 600)
