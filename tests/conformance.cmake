# The conformance suite (tests/conformance/): every value-computing op on every target present,
# compared with the interpreter. It uses only the public C API (libtri.so) and the `tri` tool's
# host-side value code (tools/host_data.cpp).
file(GLOB TRI_CONF_SRCS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/*.cpp)
add_executable(conformance ${TRI_CONF_SRCS} ${PROJECT_SOURCE_DIR}/tools/host_data.cpp ${PROJECT_SOURCE_DIR}/tools/device_memory.cpp)
target_include_directories(conformance PRIVATE ${PROJECT_SOURCE_DIR}/tools ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
target_link_libraries(conformance PRIVATE tri ${CMAKE_DL_LIBS})
add_test(NAME conformance COMMAND conformance WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(conformance PROPERTIES ENVIRONMENT "${TRI_TEST_ENV}" LABELS conformance TIMEOUT 600
                     FAIL_REGULAR_EXPRESSION "conformance: [0-9]+ passed, [1-9][0-9]* failed")
