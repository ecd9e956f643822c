// Pruning a tuning space before compiling (issue 13): what a config needs at least, read off
// its specialized IR, against what the target's program can have. A config is pruned only when
// a lower bound already passes a limit, so nothing that could fit is ever thrown away.
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace tri::tune {

// What one program of the target can have; 0: no limit of that kind (host targets).
struct Limits {
  int64_t max_threads = 0;              // threads per program (1024 on NVIDIA GPUs)
  int64_t max_shared_bytes = 0;         // shared memory per program, opted in
  int64_t registers_per_program = 0;    // 32-bit registers of one program (65536)
  int64_t max_registers_per_thread = 0; // 255 on NVIDIA GPUs
  bool tensor_cores = false;            // f16/bf16 `dot` stages both operands in shared memory
};

// Lower bounds of what a specialized kernel needs at `num_warps`, each with the value that sets
// it ("%acc = dot at 31:10, <128 x 256 x f32>").
struct Needs {
  int64_t threads = 0;
  int64_t shared_bytes = 0;  // the operand tiles of the largest tensor-core dot
  std::string shared_why;
  int64_t registers = 0;     // per thread, for the largest block value kept in registers
  std::string registers_why;
};

// `kernel` must be specialized (every dim concrete). Values that flow into a dot's operands are
// not counted as registers (a pipelined tile may go straight to shared memory).
Needs estimate(const ir::Module& m, const ir::Function& kernel, int num_warps, const Limits& limits);

// Why a config with these needs cannot run within `limits` ("" when it may): one sentence
// naming the bound, the value behind it and the limit.
std::string prune_reason(const Needs& needs, const Limits& limits, int num_warps);

}  // namespace tri::tune
