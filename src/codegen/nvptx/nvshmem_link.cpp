// NVSHMEM's device library linked into a kernel's module (nvshmem_link.h).
#include "codegen/nvptx/nvshmem_link.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <xxhash.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

namespace tri::codegen::nvptx {
namespace {

// The library's bytes, read once per path and kept for the process with their hash: every
// link parses its module lazily from them (a lazy module reads only the functions the linker
// asks for).
struct Library {
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  std::string identity;
};

Status library(const std::string& path, const Library** out) {
  static std::mutex mu;
  static std::map<std::string, Library> files;
  std::lock_guard<std::mutex> lock(mu);
  auto it = files.find(path);
  if (it == files.end()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path);
    if (!buf)
      return Status(Code::Unsupported, "NVSHMEM's device library " + path + " cannot be read (" +
                                           buf.getError().message() +
                                           "); set TRI_NVSHMEM_BC to the wheel's lib/libnvshmem_device.bc, or to "
                                           "\"off\" to reach peers without it");
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits((*buf)->getBufferStart(), (*buf)->getBufferSize())));
    it = files.emplace(path, Library{std::move(*buf), std::string("nvshmem device ") + hex}).first;
  }
  *out = &it->second;
  return Status::ok();
}

}  // namespace

Status link_nvshmem_device(llvm::Module& mod, const std::string& path, const std::string& kernel) {
  const Library* file = nullptr;
  TRI_RETURN_IF_ERROR(library(path, &file));
  llvm::Expected<std::unique_ptr<llvm::Module>> lib = llvm::getLazyBitcodeModule(file->bytes->getMemBufferRef(),
                                                                                  mod.getContext());
  if (!lib)
    return Status(Code::Unsupported, "NVSHMEM's device library " + path + " is not bitcode this LLVM (" +
                                         LLVM_VERSION_STRING + ") reads: " + llvm::toString(lib.takeError()));
  // The kernel's data layout (32-bit shared and constant pointers) and triple for the library,
  // so that the linker has nothing to reconcile.
  (*lib)->setDataLayout(mod.getDataLayout());
  (*lib)->setTargetTriple(mod.getTargetTriple());
  // The state globals are not called: declared here, the linker brings their definitions.
  for (const char* name : {kNvshmemStateGlobal, kNvshmemVersionGlobal}) {
    llvm::GlobalVariable* g = (*lib)->getGlobalVariable(name);
    if (!g)
      return Status(Code::Unsupported, "NVSHMEM's device library " + path + " has no " + name +
                                           ": Tri links the device library of NVSHMEM 3.x");
    if (!mod.getGlobalVariable(name))
      new llvm::GlobalVariable(mod, g->getValueType(), g->isConstant(), llvm::GlobalValue::ExternalLinkage, nullptr,
                               name, nullptr, llvm::GlobalValue::NotThreadLocal, g->getAddressSpace());
  }
  if (llvm::Linker::linkModules(mod, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    return Status(Code::Unsupported, "NVSHMEM's device library " + path + " does not link with kernel @" + kernel);
  for (llvm::Function& f : mod) {
    if (f.isDeclaration() || f.getName() == kernel) continue;
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
  }
  llvm::internalizeModule(mod, [&](const llvm::GlobalValue& gv) {
    return gv.getName() == kernel || gv.getName() == kNvshmemStateGlobal || gv.getName() == kNvshmemVersionGlobal;
  });
  return Status::ok();
}

std::string nvshmem_device_identity(const std::string& path) {
  const Library* file = nullptr;
  return library(path, &file).is_ok() ? file->identity : "nvshmem device unreadable";
}

}  // namespace tri::codegen::nvptx
