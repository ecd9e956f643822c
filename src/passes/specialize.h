// Specialization: turns a kernel with symbolic constexprs into concrete IR.
//
// This is the step between a serialized kernel (one IR for every block size) and a backend,
// which needs every block shape known. Triton specializes the same way, on constexpr values and
// on facts about arguments (alignment, divisibility); Tri keeps both in the cache key.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::passes {

// A value for one constexpr: an Int, Float or Bool attribute.
struct ConstexprBinding {
  std::string name;
  ir::Attr value;
};

// Facts the caller guarantees about a runtime argument, added to those the IR declares.
struct ArgFacts {
  uint32_t param = 0;       // index among the kernel's runtime parameters
  uint32_t align = 0;       // pointer alignment in bytes (a power of two), 0: nothing new
  uint32_t divisible = 0;   // integer divisibility, 0: nothing new
  bool equals_one = false;  // an integer that is 1 (launch-time specialization, like Triton's):
                            // its uses read the constant 1, so strides of 1 fold away
};

// Copies kernel `kernel` of `m`, and every device function it calls, into a new module in which
// each constexpr name (in types and attributes) is replaced by its value: the binding's, or the
// declared default. The constexprs stay listed on the kernel with their bound values as defaults,
// so printing the result shows what it was specialized for. Errors are Code::Specialize (a name
// the kernel does not declare, a missing value, a value of the wrong kind or type, a dimension
// that is not a positive power of two) and Code::NotFound (no such kernel). The result is not
// verified; the pipeline (pipeline.h) verifies it.
Status specialize(const ir::Module& m, std::string_view kernel, const std::vector<ConstexprBinding>& values,
                  const std::vector<ArgFacts>& facts, std::unique_ptr<ir::Module>* out);

}  // namespace tri::passes
