// Tri's GPU math library in the compiler: the embedded NVPTX bitcode of src/codegen/mathlib/*.c
// (built by cmake/mathlib.cmake) and the step that links the functions a module calls into it.
// docs/codegen.md, "The math library", says how it is built and how accurate it is.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace llvm {
class Module;
}

namespace tri::codegen::mathlib {

extern const unsigned char kBitcode[];
extern const size_t kBitcodeSize;

// The library function computing math function `name` (exp, sin, ... and the names of
// ir/math_fns.def) in f32 or f64: "__tri_sinf", "__tri_sin". Empty when the library has none.
std::string function_name(const std::string& name, bool f32);

// Links the definitions of the library functions `m` declares (and what they call) into `m`,
// internal, with the library's target attributes removed so they inline. Does nothing when `m`
// calls none. Errors: Code::Internal if the embedded bitcode cannot be read or linked.
Status link_into(llvm::Module& m);

}  // namespace tri::codegen::mathlib
