// The CPU backend as a target ("cpu"): LLVM ORC JIT for the host, program instances on the
// context's thread pool (target/cpu/kernel.h, compile/jit.h).
//
// Its disk-cache payload is the object file ORC links ("obj") and, as metadata, what the launch
// loop needs: the entry's name and parameter count, the stack its block buffers take, and the
// runtime sites of print/assert/for ops. A site's source location is stored as the op's index
// in a walk of the module (functions in order, ops in block order, regions depth first), and
// read back from the module the kernel is loaded for: the cache key ignores locations, so an
// entry made from a file with other line numbers still reports this file's lines.
#include "base/bytes.h"
#include "base/thread_pool.h"
#include "target/cpu/compile/jit.h"
#include "target/cpu/compile/package.h"
#include "target/cpu/target.h"

namespace tri::cpu {
namespace {

// ---- op walk: the canonical order of ops in a module, and their locations
void walk_block(const ir::Function& f, ir::BlockId b, std::vector<Loc>* out) {
  for (ir::OpId o : f.block(b).ops) {
    out->push_back(f.op(o).loc);
    for (ir::BlockId r : f.op(o).regions) walk_block(f, r, out);
  }
}

std::vector<Loc> op_locs(const ir::Module& m) {
  std::vector<Loc> locs;
  for (const auto& f : m.functions)
    if (f->body != ir::kNoBlock) walk_block(*f, f->body, &locs);
  return locs;
}

constexpr uint32_t kNoOrdinal = ~0u;

class LocMap {
 public:
  explicit LocMap(const ir::Module& m) : locs_(op_locs(m)) {}
  // A location as (ordinal, line, col): the first op with that location, or kNoOrdinal and the
  // location itself when no op has it.
  void put(ByteWriter* w, Loc l) const {
    uint32_t ord = kNoOrdinal;
    if (l.known())
      for (size_t i = 0; i < locs_.size(); ++i)
        if (locs_[i].line == l.line && locs_[i].col == l.col) {
          ord = static_cast<uint32_t>(i);
          break;
        }
    w->u(ord, 4);
    w->u(ord == kNoOrdinal ? l.line : 0, 4);
    w->u(ord == kNoOrdinal ? l.col : 0, 4);
  }
  Loc get(ByteReader* r) const {
    uint32_t ord = static_cast<uint32_t>(r->u(4));
    Loc l;
    l.line = static_cast<uint32_t>(r->u(4));
    l.col = static_cast<uint32_t>(r->u(4));
    if (ord == kNoOrdinal) return l;
    if (ord >= locs_.size()) {
      r->ok = false;
      return l;
    }
    return locs_[ord];
  }

 private:
  std::vector<Loc> locs_;
};

constexpr uint32_t kMetaVersion = 1;

std::string encode_meta(const ir::Module& m, const CpuKernel& k) {
  LocMap lm(m);
  ByteWriter w;
  w.u(kMetaVersion, 4);
  w.str(k.name());
  w.u(k.num_params());
  w.u(k.stack_bytes());
  write_sites(&w, k.sites(), [&](ByteWriter* w, Loc l) { lm.put(w, l); });
  return std::move(w.s);
}

Status decode_meta(const ir::Module& m, const std::string& meta, CpuObject* o) {
  LocMap lm(m);
  ByteReader r{meta};
  if (r.u(4) != kMetaVersion) return Status(Code::UnsupportedVersion, "cpu cache metadata of another version");
  o->name = r.str();
  o->num_params = r.u();
  o->stack_bytes = r.u();
  o->sites.source = m.source_name;
  read_sites(&r, &o->sites, [&](ByteReader* r) { return lm.get(r); });
  if (!r.done()) return Status(Code::CorruptBinary, "cpu cache metadata is malformed");
  return Status::ok();
}

// A kernel ORC loaded, which the disk cache can store: the object file and its metadata.
class CachedExecutable final : public CpuExecutable {
 public:
  using CpuExecutable::CpuExecutable;
  Status payload(const ir::Module& m, const ir::Function& kernel, target::Payload* out) const override {
    out->kind = "obj";
    out->bytes = this->kernel().object();
    out->metadata = encode_meta(m, this->kernel());
    return Status::ok();
  }
};

bool is_wait(ir::Opcode c) { return c == ir::Opcode::Wait; }
bool waits(const ir::Module& m, const ir::Function& kernel) { return ir::find_op(m, kernel, &is_wait, nullptr) != ir::kNoOp; }

class CpuTarget final : public CpuRuntime {
 public:
  std::string_view code_kinds() const override { return "llvm (the optimized LLVM IR), asm (the host assembly)"; }
  bool keeps_code_on_request() const override { return true; }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    if (options.checked)
      return Status(Code::Unsupported, "checked mode runs on the \"interp\" target only; compile with target \"interp\"");
    CpuCompileOptions cpu;
    cpu.keep_llvm_ir = cpu.keep_asm = options.keep_code;
    std::shared_ptr<const CpuKernel> k;
    cpu.cancel = options.cancel;
    TRI_RETURN_IF_ERROR(compile_cpu(m, kernel, cpu, &k));
    *out = std::make_shared<CachedExecutable>(std::move(k), waits(m, kernel));
    return Status::ok();
  }
  Status cache_identity(const ir::Module&, const ir::Function&, const target::CompileOptions& options,
                        std::string* out) const override {
    static const std::string id = cpu_identity(CpuCompileOptions{});
    *out = options.checked || id.empty() ? std::string() : "obj 2; " + id;
    return Status::ok();
  }
  Status load(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions&,
              const target::Payload& p, std::shared_ptr<const target::Executable>* out) const override {
    if (p.kind != "obj") return Status(Code::CorruptBinary, "a cpu cache entry holds \"" + p.kind + "\", not \"obj\"");
    CpuObject obj;
    TRI_RETURN_IF_ERROR(decode_meta(m, p.metadata, &obj));
    if (obj.name != kernel.name || obj.num_params != kernel.params.size())
      return Status(Code::CorruptBinary, "the cpu cache entry is for another kernel");
    obj.object = p.bytes;
    std::unique_ptr<CpuKernel> k;
    TRI_RETURN_IF_ERROR(load_cpu_object(std::move(obj), CpuCompileOptions{}, &k));
    *out = std::make_shared<CachedExecutable>(std::shared_ptr<const CpuKernel>(std::move(k)), waits(m, kernel));
    return Status::ok();
  }
  std::vector<std::string> default_machines() const override { return {"x86-64-v2", "x86-64-v3", "x86-64-v4"}; }
  Status compile_package(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                         const std::vector<std::string>& machines, std::vector<package::Payload>* out,
                         std::vector<std::string>* notes) const override {
    if (options.checked)
      return Status(Code::Unsupported, "checked mode runs on the \"interp\" target only; packages hold cpu and cuda code");
    for (const std::string& level : machines) {
      package::Payload p;
      TRI_RETURN_IF_ERROR(build_shared_object(m, kernel, level, waits(m, kernel), options.cancel, &p));
      out->push_back(std::move(p));
    }
    return Status::ok();
  }
};

}  // namespace

const target::Target* cpu_target() {
  static const CpuTarget t;
  return &t;
}

}  // namespace tri::cpu
