// The cpu target's code in packages (`tri aot`; docs/format.md, "cpu payloads"): a kernel
// compiled for one x86-64 level and linked, with trampolines for the runtime symbols it calls,
// into a shared object that target/cpu/executable.cpp loads with dlopen.
#pragma once

#include "base/launch.h"
#include "ir/ir.h"
#include "package/package.h"

namespace tri::cpu {

// Compiles `kernel` of `m` (prepared) for `level` ("x86-64-v2", "-v3", "-v4") and links it with
// the C compiler driver ($CC, else cc) into a payload of kind "so". Code::InvalidArgument for an
// unknown level; Code::NotFound when there is no C compiler driver to link with.
Status build_shared_object(const ir::Module& m, const ir::Function& kernel, const std::string& level, bool coresident,
                           const CancelToken& cancel, package::Payload* out);

}  // namespace tri::cpu
