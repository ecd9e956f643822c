// build_shared_object (package.h): the kernel's object file for an x86-64 level (ORC's form:
// position-independent, small code model), and an assembly file of trampolines, one per runtime
// symbol (runtime.h's host_symbols(): the callbacks, libm, memcpy), each a hidden function that
// jumps through a slot of the exported table kSymbolTable. `cc -shared -nostdlib -z defs` links
// them, so the object has no undefined symbol and needs no library: the loader fills the table
// (target/cpu/executable.cpp) with the same functions ORC binds, whatever the host process has.
#include <cstdlib>

#include "base/subprocess.h"
#include "target/cpu/compile/jit.h"
#include "target/cpu/compile/package.h"
#include "target/cpu/runtime.h"
#include "target/cpu/target.h"

namespace tri::cpu {
namespace {

std::string trampolines(const std::vector<HostSymbol>& syms) {
  std::string s = "  .text\n";
  for (size_t i = 0; i < syms.size(); ++i) {
    const std::string n = std::string("\"") + syms[i].name + "\"";
    s += "  .globl " + n + "\n  .hidden " + n + "\n  .type " + n + ",@function\n" + n + ":\n  jmp *.Ltable+" +
         std::to_string(8 * i) + "(%rip)\n  .size " + n + ", .-" + n + "\n";
  }
  const std::string bytes = std::to_string(8 * syms.size());
  s += std::string("  .bss\n  .balign 8\n  .globl ") + kSymbolTable + "\n  .type " + kSymbolTable + ",@object\n  .size " +
       kSymbolTable + ", " + bytes + "\n" + kSymbolTable + ":\n.Ltable:\n  .zero " + bytes + "\n";
  s += "  .section .note.GNU-stack,\"\",@progbits\n";
  return s;
}

}  // namespace

Status build_shared_object(const ir::Module& m, const ir::Function& kernel, const std::string& level, bool coresident,
                           const CancelToken& cancel, package::Payload* out) {
  bool known = false;
  for (const std::string& l : cpu_levels()) known = known || l == level;
  if (!known)
    return Status(Code::InvalidArgument, "unknown cpu level '" + level + "' (x86-64-v2, x86-64-v3 or x86-64-v4)");
  const char* cc_env = std::getenv("CC");
  const std::string cc = find_tool({cc_env ? cc_env : "", "cc", "gcc", "clang"});
  if (cc.empty())
    return Status(Code::NotFound, "packing cpu code needs a C compiler driver to link it (cc, gcc or clang on PATH, "
                                  "or $CC); install one (apt-get install gcc)");
  CpuCompileOptions o;
  o.cpu = level;
  o.cancel = cancel;
  CpuObject obj;
  TRI_RETURN_IF_ERROR(compile_cpu_object(m, kernel, o, &obj));
  ScratchDir dir;
  TRI_RETURN_IF_ERROR(dir.create("tri-aot"));
  std::string obj_path, asm_path, out_output;
  const std::vector<HostSymbol>& syms = host_symbols();
  TRI_RETURN_IF_ERROR(dir.write("kernel.o", obj.object, &obj_path));
  TRI_RETURN_IF_ERROR(dir.write("runtime.s", trampolines(syms), &asm_path));
  const std::string so_path = dir.path() + "/kernel.so";
  TRI_RETURN_IF_ERROR(run_tool({cc, "-shared", "-nostdlib", "-s", "-Wl,-z,defs", "-Wl,-z,now", "-Wl,--hash-style=gnu",
                                "-Wl,-z,noexecstack", "-Wl,-z,noseparate-code", "-o", so_path, obj_path, asm_path, "-lgcc"},
                               &out_output));
  SharedObjectInfo info;
  info.name = obj.name;
  info.num_params = obj.num_params;
  info.stack_bytes = obj.stack_bytes;
  info.coresident = coresident;
  info.sites = std::move(obj.sites);
  info.sites.source = m.source_name;
  for (const HostSymbol& h : syms) info.symbols.push_back(h.name);
  out->machine = level;
  out->kind = "so";
  out->metadata = encode_shared_object_info(info);
  return dir.read("kernel.so", &out->bytes);
}

}  // namespace tri::cpu
