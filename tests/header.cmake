# include/tri/tri.h must compile on its own as strict C99 and as C++11, warning-free, since every
# host and every FFI generator reads it.
add_test(NAME capi/header_c99
         COMMAND ${CMAKE_C_COMPILER} -std=c99 -Wall -Wextra -pedantic-errors -Werror -Wstrict-prototypes
                 -fsyntax-only -x c ${PROJECT_SOURCE_DIR}/include/tri/tri.h)
add_test(NAME capi/header_cxx11
         COMMAND ${CMAKE_CXX_COMPILER} -std=c++11 -Wall -Wextra -pedantic-errors -Werror -fsyntax-only -x c++
                 ${PROJECT_SOURCE_DIR}/include/tri/tri.h)
set_tests_properties(capi/header_c99 capi/header_cxx11 PROPERTIES LABELS capi)
