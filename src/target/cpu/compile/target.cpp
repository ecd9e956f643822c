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
#include "target/target.h"

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
  const RuntimeSites& s = k.sites();
  w.u(s.prints.size(), 4);
  for (const auto& p : s.prints) {
    w.str(p.prefix);
    lm.put(&w, p.loc);
    w.u(p.operands.size(), 4);
    for (const auto& o : p.operands) {
      w.u(static_cast<uint64_t>(o.scalar), 1);
      w.u(o.is_ptr, 1);
      w.ints(o.shape);
    }
    w.ints(p.lanes);
    w.u(p.has_mask, 1);
  }
  w.u(s.asserts.size(), 4);
  for (const auto& a : s.asserts) {
    w.str(a.msg);
    lm.put(&w, a.loc);
    w.ints(a.lanes);
    w.str(a.type);
    w.u(a.has_mask, 1);
  }
  w.u(s.errors.size(), 4);
  for (const auto& e : s.errors) {
    lm.put(&w, e.loc);
    w.str(e.before);
    w.str(e.after);
  }
  return w.s;
}

Status decode_meta(const ir::Module& m, const std::string& meta, CpuObject* o) {
  LocMap lm(m);
  ByteReader r{meta};
  if (r.u(4) != kMetaVersion) return Status(Code::UnsupportedVersion, "cpu cache metadata of another version");
  o->name = r.str();
  o->num_params = r.u();
  o->stack_bytes = r.u();
  RuntimeSites& s = o->sites;
  s.source = m.source_name;
  uint64_t n = r.u(4);
  for (uint64_t i = 0; i < n && r.ok; ++i) {
    PrintSite p;
    p.prefix = r.str();
    p.loc = lm.get(&r);
    uint64_t nops = r.u(4);
    for (uint64_t j = 0; j < nops && r.ok; ++j) {
      PrintOperand op;
      uint64_t sc = r.u(1);
      if (sc >= static_cast<uint64_t>(ir::kNumScalars)) r.ok = false;
      op.scalar = static_cast<ir::Scalar>(sc);
      op.is_ptr = r.u(1) != 0;
      op.shape = r.ints();
      p.operands.push_back(std::move(op));
    }
    p.lanes = r.ints();
    p.has_mask = r.u(1) != 0;
    s.prints.push_back(std::move(p));
  }
  n = r.u(4);
  for (uint64_t i = 0; i < n && r.ok; ++i) {
    AssertSite a;
    a.msg = r.str();
    a.loc = lm.get(&r);
    a.lanes = r.ints();
    a.type = r.str();
    a.has_mask = r.u(1) != 0;
    s.asserts.push_back(std::move(a));
  }
  n = r.u(4);
  for (uint64_t i = 0; i < n && r.ok; ++i) {
    ErrorSite e;
    e.loc = lm.get(&r);
    e.before = r.str();
    e.after = r.str();
    s.errors.push_back(std::move(e));
  }
  if (!r.done()) return Status(Code::CorruptBinary, "cpu cache metadata is malformed");
  return Status::ok();
}

class CpuExecutable final : public target::Executable {
 public:
  // coresident: the kernel waits on signals (CpuKernel::run).
  CpuExecutable(std::shared_ptr<const CpuKernel> k, bool coresident) : k_(std::move(k)), coresident_(coresident) {}

  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override {
    static const PrintSink kNoPrint;
    ThreadPool* pool = nullptr;
    if (env.pool) TRI_RETURN_IF_ERROR(env.pool(env.pool_user, &pool));
    return k_->run(grid, args, nargs, pool, env.print ? *env.print : kNoPrint, env.cancel, env.team, coresident_);
  }
  std::string code(std::string_view kind) const override {
    if (kind == "llvm") return k_->llvm_ir();
    if (kind == "asm") return k_->assembly();
    return std::string();
  }
  Status payload(const ir::Module& m, const ir::Function& kernel, target::Payload* out) const override {
    out->kind = "obj";
    out->bytes = k_->object();
    out->metadata = encode_meta(m, *k_);
    return Status::ok();
  }

 private:
  std::shared_ptr<const CpuKernel> k_;
  bool coresident_;
};

bool is_wait(ir::Opcode c) { return c == ir::Opcode::Wait; }
bool waits(const ir::Module& m, const ir::Function& kernel) { return ir::find_op(m, kernel, &is_wait, nullptr) != ir::kNoOp; }

class CpuTarget final : public target::Target {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view code_kinds() const override { return "llvm (the optimized LLVM IR), asm (the host assembly)"; }
  bool keeps_code_on_request() const override { return true; }
  // Alignment and divisibility facts reach the CPU code too (aligned vector accesses, loops
  // without remainders), but LLVM finds most of that itself and a variant costs a compile, so
  // launch-time specialization is there when asked for and off by default.
  bool specializes_at_launch() const override { return true; }
  bool specializes_at_launch_by_default() const override { return false; }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    if (options.checked)
      return Status(Code::Unsupported, "checked mode runs on the \"interp\" target only; compile with target \"interp\"");
    CpuCompileOptions cpu;
    cpu.keep_llvm_ir = cpu.keep_asm = options.keep_code;
    std::shared_ptr<const CpuKernel> k;
    cpu.cancel = options.cancel;
    TRI_RETURN_IF_ERROR(compile_cpu(m, kernel, cpu, &k));
    *out = std::make_shared<CpuExecutable>(std::move(k), waits(m, kernel));
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
    *out = std::make_shared<CpuExecutable>(std::shared_ptr<const CpuKernel>(std::move(k)), waits(m, kernel));
    return Status::ok();
  }
};

}  // namespace

const target::Target* cpu_target() {
  static const CpuTarget t;
  return &t;
}

}  // namespace tri::cpu
