// Subcommands of the `tri` tool implemented outside tools/tri.cpp; the dispatcher there calls
// them with argv[0] being the subcommand's name ("run", "test"). Each returns the process exit
// status: 0 on success, 1 when the work failed (a kernel error, a failed expectation), 2 on a
// usage error.
#pragma once

#include <string>

#include "kernel_runner.h"

// tri run FILE --kernel NAME [options]: runs one kernel on inputs described on the command line
// and saves its outputs as .npy (docs/testing.md).
int tri_cmd_run(int argc, char** argv);

// tri test FILE...: runs the `// run:` lines of IR files on every target present and checks their
// expectations (docs/testing.md).
int tri_cmd_test(int argc, char** argv);

// tri compile FILE [--kernel NAME] [--target sm_90] ...: compiles one kernel and writes its PTX,
// launch descriptor and LLVM IR (no GPU needed).
int tri_cmd_compile(int argc, char** argv);

// tri import FILE.ttir [-o OUT] [--binary]: converts Triton's TTIR to Tri IR and prints the ops it
// read and made (docs/import.md).
int tri_cmd_import(int argc, char** argv);
// tri cache stats|ls|verify|clear|prune|export|import|keygen|sign|check [--dir DIR]: looks after
// a disk cache of compiled kernels and its bundles (docs/cache.md).
int tri_cmd_cache(int argc, char** argv);

// tri tune FILE --kernel NAME --config C... [options]: tunes one kernel over a list of configs on
// a host target, prints every config's time and the winner, and stores the result
// (docs/tune.md).
int tri_cmd_tune(int argc, char** argv);

// tri aot FILE -o OUT.tripkg [--kernel NAME[:C=V,...]]... [--target cuda|cpu]... [--header OUT.h]:
// compiles kernels ahead of time into a package (docs/aot.md).
int tri_cmd_aot(int argc, char** argv);

namespace tri_tool {
// Makes runtime argument `name` of parameter `p` from a `tri run --arg` SPEC (rand:, fill:,
// zeros:, iota:, npy:, npy-cast:, or a scalar); false with a message (tools/cmd_run.cpp), and
// *io_error (when given) true when it was a file that could not be read (exit status 1, not the
// usage error's 2).
bool make_arg(const std::string& name, const std::string& spec, const ParamInfo& p, ArgInput* out,
              std::string* error, bool* io_error = nullptr);
}  // namespace tri_tool
