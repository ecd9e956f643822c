// Limits on what a reader accepts, so untrusted input can never make Tri recurse or allocate
// without bound. Readers report Code::LimitExceeded with the limit's name when one is passed.
#pragma once

#include <cstdint>

namespace tri::ir {

constexpr int kMaxNesting = 64;                  // region nesting depth
constexpr uint64_t kMaxFunctions = 1u << 16;     // functions per module
constexpr uint64_t kMaxOpsPerFunction = 1u << 22;
constexpr uint64_t kMaxValuesPerFunction = 1u << 23;
constexpr uint64_t kMaxTypes = 1u << 20;
constexpr uint64_t kMaxStringBytes = 1u << 20;   // one string (a name, an asm text)
constexpr int64_t kMaxDim = int64_t(1) << 20;    // one block dimension
constexpr int64_t kMaxBlockElements = int64_t(1) << 20;  // elements of one block (Triton's limit)
constexpr int kMaxCallDepth = 256;               // calls nested in one another (the longest call chain)
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;
// Runtime parameters and constexprs of one function. LLVM's interprocedural passes grow faster
// than linearly in the parameter count (10,000 took 8 s, 40,000 three minutes on the cpu
// target), and a GPU launch passes at most 256 arguments.
constexpr uint64_t kMaxParams = 256;
constexpr uint64_t kMaxConstexprs = 256;
// GPU targets: elements of one block value per thread of a program (elements / (32 * warps)).
// The code a GPU compile makes grows with it (ptxas took 15 s for 512 per thread); 2048 allows a
// 2^20-element block at 16 warps and a 65,536-element one at 1 warp.
constexpr int64_t kMaxElementsPerThread = 2048;

}  // namespace tri::ir
