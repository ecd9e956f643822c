# Tri's GPU math library (src/codegen/mathlib/*.c, docs/codegen.md "The math library"):
# compiled by clang-19 to NVPTX bitcode, linked into one module by llvm-link, embedded in libtri
# as a byte array (tri_mathlib_bitcode in mathlib_bc.cpp) that the NVPTX lowering links into
# kernels that call it. The same sources build tri_mathlib_host, a host library for the tests.
# Included from src/CMakeLists.txt after tri_llvm_obj exists.

find_program(TRI_CLANG19 NAMES clang-19 PATHS /usr/lib/llvm-19/bin)
if(NOT TRI_CLANG19)
  message(FATAL_ERROR "Tri builds its GPU math library with clang 19: apt-get install clang-19 "
                      "(scripts/install-deps.sh), or set TRI_CLANG19 to a clang 19 binary")
endif()
execute_process(COMMAND ${TRI_LLVM_CONFIG} --bindir OUTPUT_VARIABLE TRI_LLVM_BINDIR OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(TRI_LLVM_LINK NAMES llvm-link llvm-link-19 PATHS ${TRI_LLVM_BINDIR} NO_DEFAULT_PATH)
if(NOT TRI_LLVM_LINK)
  find_program(TRI_LLVM_LINK NAMES llvm-link-19)
endif()
if(NOT TRI_LLVM_LINK)
  message(FATAL_ERROR "Tri links its GPU math library with llvm-link from LLVM 19: apt-get install llvm-19 "
                      "(looked in ${TRI_LLVM_BINDIR})")
endif()

set(TRI_MATHLIB_DIR ${PROJECT_SOURCE_DIR}/src/codegen/mathlib)
file(GLOB TRI_MATHLIB_SRCS CONFIGURE_DEPENDS ${TRI_MATHLIB_DIR}/*.c)
file(GLOB TRI_MATHLIB_HDRS CONFIGURE_DEPENDS ${TRI_MATHLIB_DIR}/*.h)
# No fp contraction and no fast-math: the same code rounds the same way on the host and the GPU;
# -fno-math-errno makes __builtin_sqrt the sqrt instruction; -fno-builtin keeps clang from
# turning code into libm calls; -ffreestanding uses clang's own stdint.h, not the host C library's.
set(TRI_MATHLIB_CFLAGS -std=c11 -O2 -ffp-contract=off -fno-math-errno -fno-builtin -ffreestanding)
set(TRI_MATHLIB_OUT ${CMAKE_CURRENT_BINARY_DIR}/mathlib)
set(bcs)
foreach(src ${TRI_MATHLIB_SRCS})
  get_filename_component(name ${src} NAME_WE)
  set(bc ${TRI_MATHLIB_OUT}/${name}.bc)
  add_custom_command(OUTPUT ${bc}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${TRI_MATHLIB_OUT}
                     COMMAND ${TRI_CLANG19} --target=nvptx64-nvidia-cuda ${TRI_MATHLIB_CFLAGS} -nostdlib
                             -emit-llvm -c ${src} -o ${bc}
                     DEPENDS ${src} ${TRI_MATHLIB_HDRS}
                     COMMENT "Compiling the math library's ${name}.c to NVPTX bitcode" VERBATIM)
  list(APPEND bcs ${bc})
endforeach()
add_custom_command(OUTPUT ${TRI_MATHLIB_OUT}/mathlib.bc
                   COMMAND ${TRI_LLVM_LINK} ${bcs} -o ${TRI_MATHLIB_OUT}/mathlib.bc
                   DEPENDS ${bcs} COMMENT "Linking the math library's bitcode" VERBATIM)
add_custom_command(OUTPUT ${TRI_MATHLIB_OUT}/mathlib_bc.cpp
                   COMMAND ${CMAKE_COMMAND} -DIN=${TRI_MATHLIB_OUT}/mathlib.bc -DOUT=${TRI_MATHLIB_OUT}/mathlib_bc.cpp
                           -P ${PROJECT_SOURCE_DIR}/cmake/embed_bitcode.cmake
                   DEPENDS ${TRI_MATHLIB_OUT}/mathlib.bc ${PROJECT_SOURCE_DIR}/cmake/embed_bitcode.cmake
                   COMMENT "Embedding the math library's bitcode" VERBATIM)
target_sources(tri_llvm_obj PRIVATE ${TRI_MATHLIB_OUT}/mathlib_bc.cpp)

add_library(tri_mathlib_host STATIC ${TRI_MATHLIB_SRCS})
# -O2 also in Debug builds: the test evaluates it a few million times.
target_compile_options(tri_mathlib_host PRIVATE -std=c11 -O2 -ffp-contract=off -fno-math-errno)
target_include_directories(tri_mathlib_host PUBLIC ${PROJECT_SOURCE_DIR}/src)
