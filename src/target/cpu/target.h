// The "cpu" target's runtime half: an executable that launches a loaded CpuKernel (kernel.h) on
// the context's thread pool, the codec of the launch loop's runtime sites (shared by the disk
// cache's metadata and the packages' shared objects), and the target without its compiler, which
// loads a package's shared object for the best x86-64 level this CPU has (dlopen). The compiler
// half (compile/target.cpp: ORC, and the shared objects `tri aot` builds) derives from CpuRuntime.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "target/cpu/kernel.h"
#include "target/target.h"

namespace tri::cpu {

class CpuExecutable : public target::Executable {
 public:
  // coresident: the kernel waits on signals (CpuKernel::run).
  CpuExecutable(std::shared_ptr<const CpuKernel> k, bool coresident) : k_(std::move(k)), coresident_(coresident) {}
  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override;
  std::string code(std::string_view kind) const override {
    if (kind == "llvm") return k_->llvm_ir();
    if (kind == "asm") return k_->assembly();
    return std::string();
  }
  const CpuKernel& kernel() const { return *k_; }
  bool coresident() const { return coresident_; }

 private:
  std::shared_ptr<const CpuKernel> k_;
  bool coresident_;
};

// The runtime sites (abi.h) in metadata: `put_loc` and `get_loc` write and read a location (the
// disk cache maps it through the module's ops; a package stores it as it is).
void write_sites(ByteWriter* w, const RuntimeSites& s, const std::function<void(ByteWriter*, Loc)>& put_loc);
// False when the bytes do not hold sites (r->ok is then false too).
bool read_sites(ByteReader* r, RuntimeSites* s, const std::function<Loc(ByteReader*)>& get_loc);

// A package's shared object for one x86-64 level (docs/format.md, "cpu payloads"): the metadata
// that goes with its bytes. `symbols` are the runtime symbols the object's table holds, in order.
struct SharedObjectInfo {
  std::string name;
  uint64_t num_params = 0;
  uint64_t stack_bytes = 0;
  bool coresident = false;
  RuntimeSites sites;  // sites.source names the module
  std::vector<std::string> symbols;
};
std::string encode_shared_object_info(const SharedObjectInfo& info);
Status decode_shared_object_info(const std::string& meta, SharedObjectInfo* out);
// The name of the table of runtime symbols in a package's shared object, and of its entry.
inline constexpr const char* kSymbolTable = "tri_rt_table";

// The x86-64 levels packages hold code for, best first, and whether this CPU runs each.
const std::vector<std::string>& cpu_levels();
bool cpu_runs(const std::string& level);

// The target without its compiler: everything but compile(), cache_identity() and load() of the
// disk cache's object files (which need ORC).
class CpuRuntime : public target::Target {
 public:
  std::string_view name() const override { return "cpu"; }
  // Alignment and divisibility facts reach the CPU code too (aligned vector accesses, loops
  // without remainders), but LLVM finds most of that itself and a variant costs a compile, so
  // launch-time specialization is there when asked for and off by default.
  bool specializes_at_launch() const override { return true; }
  bool specializes_at_launch_by_default() const override { return false; }
  Status load_package(const std::vector<package::Payload>& payloads, const std::string& what,
                      std::shared_ptr<const target::Executable>* out, std::string* note) const override;
};

}  // namespace tri::cpu
