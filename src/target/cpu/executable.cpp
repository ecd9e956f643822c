// The "cpu" target's runtime half (target.h): launching a CpuKernel, the runtime sites in
// metadata, and packages' shared objects loaded with dlopen.
//
// A package's shared object (built by compile/package.cpp) has no undefined symbol: each runtime
// symbol its code calls (the callbacks of runtime.h, libm's functions, memcpy) is a hidden
// trampoline that jumps through the exported table kSymbolTable, which this loader fills from
// host_symbols() before anything runs. So the object binds to exactly the functions ORC would
// bind, whatever the process exports, and several packages' objects coexist (RTLD_LOCAL). The
// bytes are loaded from a memfd: nothing is written to the file system; each loaded object keeps
// its memfd (one descriptor) open.
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "target/cpu/runtime.h"
#include "target/cpu/target.h"

namespace tri::cpu {
namespace {

constexpr uint32_t kSharedObjectVersion = 1;

void put_loc(ByteWriter* w, Loc l) {
  w->u(l.line, 4);
  w->u(l.col, 4);
}

Loc get_loc(ByteReader* r) {
  Loc l;
  l.line = static_cast<uint32_t>(r->u(4));
  l.col = static_cast<uint32_t>(r->u(4));
  return l;
}

// dlclose when the last kernel of an object goes. The memfd stays open as long as the object is
// loaded: glibc finds an object already loaded by its name, so a name (/proc/self/fd/N) must not
// be reused for another object while the first is loaded.
struct Handle {
  void* h = nullptr;
  int fd = -1;
  ~Handle() {
    if (h) ::dlclose(h);
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Status CpuExecutable::launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const {
  static const PrintSink kNoPrint;
  ThreadPool* pool = nullptr;
  if (env.pool) TRI_RETURN_IF_ERROR(env.pool(env.pool_user, &pool));
  return k_->run(grid, args, nargs, pool, env.print ? *env.print : kNoPrint, env.cancel, env.team, coresident_);
}

void write_sites(ByteWriter* w, const RuntimeSites& s, const std::function<void(ByteWriter*, Loc)>& put) {
  w->u(s.prints.size(), 4);
  for (const auto& p : s.prints) {
    w->str(p.prefix);
    put(w, p.loc);
    w->u(p.operands.size(), 4);
    for (const auto& o : p.operands) {
      w->u(static_cast<uint64_t>(o.scalar), 1);
      w->u(o.is_ptr, 1);
      w->ints(o.shape);
    }
    w->ints(p.lanes);
    w->u(p.has_mask, 1);
  }
  w->u(s.asserts.size(), 4);
  for (const auto& a : s.asserts) {
    w->str(a.msg);
    put(w, a.loc);
    w->ints(a.lanes);
    w->str(a.type);
    w->u(a.has_mask, 1);
  }
  w->u(s.errors.size(), 4);
  for (const auto& e : s.errors) {
    put(w, e.loc);
    w->str(e.before);
    w->str(e.after);
  }
}

bool read_sites(ByteReader* r, RuntimeSites* s, const std::function<Loc(ByteReader*)>& get) {
  uint64_t n = r->u(4);
  for (uint64_t i = 0; i < n && r->ok; ++i) {
    PrintSite p;
    p.prefix = r->str();
    p.loc = get(r);
    uint64_t nops = r->u(4);
    for (uint64_t j = 0; j < nops && r->ok; ++j) {
      PrintOperand op;
      uint64_t sc = r->u(1);
      if (sc >= static_cast<uint64_t>(ir::kNumScalars)) r->ok = false;
      op.scalar = static_cast<ir::Scalar>(sc);
      op.is_ptr = r->u(1) != 0;
      op.shape = r->ints();
      p.operands.push_back(std::move(op));
    }
    p.lanes = r->ints();
    p.has_mask = r->u(1) != 0;
    s->prints.push_back(std::move(p));
  }
  n = r->u(4);
  for (uint64_t i = 0; i < n && r->ok; ++i) {
    AssertSite a;
    a.msg = r->str();
    a.loc = get(r);
    a.lanes = r->ints();
    a.type = r->str();
    a.has_mask = r->u(1) != 0;
    s->asserts.push_back(std::move(a));
  }
  n = r->u(4);
  for (uint64_t i = 0; i < n && r->ok; ++i) {
    ErrorSite e;
    e.loc = get(r);
    e.before = r->str();
    e.after = r->str();
    s->errors.push_back(std::move(e));
  }
  return r->ok;
}

std::string encode_shared_object_info(const SharedObjectInfo& info) {
  ByteWriter w;
  w.u(kSharedObjectVersion, 4);
  w.str(info.name);
  w.u(info.num_params);
  w.u(info.stack_bytes);
  w.u(info.coresident, 1);
  w.str(info.sites.source);
  write_sites(&w, info.sites, put_loc);
  w.u(info.symbols.size(), 4);
  for (const std::string& s : info.symbols) w.str(s);
  return std::move(w.s);
}

Status decode_shared_object_info(const std::string& meta, SharedObjectInfo* out) {
  ByteReader r{meta};
  if (r.u(4) != kSharedObjectVersion)
    return Status(Code::UnsupportedVersion, "a cpu shared object's metadata of another version");
  SharedObjectInfo info;
  info.name = r.str();
  info.num_params = r.u();
  info.stack_bytes = r.u();
  info.coresident = r.u(1) != 0;
  info.sites.source = r.str();
  read_sites(&r, &info.sites, get_loc);
  uint64_t n = r.u(4);
  for (uint64_t i = 0; i < n && r.ok; ++i) info.symbols.push_back(r.str());
  if (!r.done() || info.num_params > 4096) return Status(Code::CorruptBinary, "a cpu shared object's metadata is malformed");
  *out = std::move(info);
  return Status::ok();
}

const std::vector<std::string>& cpu_levels() {
  static const std::vector<std::string> levels = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
  return levels;
}

bool cpu_runs(const std::string& level) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (level == "x86-64-v4") return __builtin_cpu_supports("x86-64-v4");
  if (level == "x86-64-v3") return __builtin_cpu_supports("x86-64-v3");
  if (level == "x86-64-v2") return __builtin_cpu_supports("x86-64-v2");
#endif
  return false;
}

Status CpuRuntime::load_package(const std::vector<package::Payload>& payloads, const std::string& what,
                                std::shared_ptr<const target::Executable>* out, std::string* note) const {
  const package::Payload* pick = nullptr;
  for (const std::string& level : cpu_levels()) {
    for (const package::Payload& p : payloads)
      if (p.machine == level && p.kind == "so" && cpu_runs(level)) pick = &p;
    if (pick) break;
  }
  if (!pick) {
    std::string have, runs;
    for (const package::Payload& p : payloads) have += (have.empty() ? "" : ", ") + p.machine;
    for (const std::string& level : cpu_levels())
      if (cpu_runs(level)) runs += (runs.empty() ? "" : ", ") + level;
    return Status(Code::NotFound, what + ": the package has cpu code for " + (have.empty() ? "no level" : have) +
                                      ", and this CPU runs " + (runs.empty() ? "none of x86-64-v2, -v3, -v4" : runs) +
                                      "; build the package with --cpu x86-64-v2 (every x86-64 CPU since 2009 runs it)");
  }
  SharedObjectInfo info;
  TRI_RETURN_IF_ERROR(decode_shared_object_info(pick->metadata, &info));
  // The bytes go to a memfd and dlopen maps them from there.
  auto handle = std::make_shared<Handle>();
  const int fd = handle->fd = ::memfd_create(("tri-" + info.name).c_str(), MFD_CLOEXEC);
  if (fd < 0) return Status(Code::Io, what + ": memfd_create: " + std::strerror(errno));
  size_t done = 0;
  while (done < pick->bytes.size()) {
    ssize_t n = ::write(fd, pick->bytes.data() + done, pick->bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(Code::Io, what + ": writing its code to a memfd: " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  handle->h = ::dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle->h) {
    const char* e = ::dlerror();
    return Status(Code::CorruptBinary, what + ": its " + pick->machine + " code does not load: " + (e ? e : "dlopen failed"));
  }
  void** table = static_cast<void**>(::dlsym(handle->h, kSymbolTable));
  auto entry = reinterpret_cast<EntryFn>(::dlsym(handle->h, kEntryFn));
  Dl_info di;
  void* sym_entry = nullptr;
  if (table) ::dladdr1(table, &di, &sym_entry, RTLD_DL_SYMENT);
  const auto* sym = static_cast<const ElfW(Sym)*>(sym_entry);
  if (!table || !entry || !sym ||
      sym->st_size != info.symbols.size() * sizeof(void*))
    return Status(Code::CorruptBinary, what + ": its " + pick->machine + " code has no entry point or no table of " +
                                           std::to_string(info.symbols.size()) + " runtime symbols");
  const std::vector<HostSymbol>& host = host_symbols();
  for (size_t i = 0; i < info.symbols.size(); ++i) {
    void* at = nullptr;
    for (const HostSymbol& h : host)
      if (info.symbols[i] == h.name) at = h.address;
    if (!at)
      return Status(Code::NotFound, what + ": its code calls the runtime function '" + info.symbols[i] +
                                        "', which this Tri does not have; rebuild the package with this Tri's `tri aot`");
    table[i] = at;
  }
  CpuCode code;
  code.name = info.name;
  code.num_params = info.num_params;
  code.entry = entry;
  code.sites = std::move(info.sites);
  code.stack_bytes = info.stack_bytes;
  code.keep = handle;
  note->clear();
  *out = std::make_shared<CpuExecutable>(std::make_shared<CpuKernel>(std::move(code)), info.coresident);
  return Status::ok();
}

}  // namespace tri::cpu
