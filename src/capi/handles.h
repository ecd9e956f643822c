// The objects behind the C API's opaque handles, and the glue every exported function shares:
// argument checks that set the thread's last error, and the wrapper that keeps C++ exceptions
// from crossing the boundary. The runtime's files of capi are built twice, for libtri and, with
// TRI_RUNTIME_ONLY defined, for libtri_rt, whose context has no disk cache and no tuning state.
//
// Lifetime: handles are reference counted. tri_X_destroy drops the caller's reference; a child
// holds a reference on its parent (a module on its context, a blob on its context), so a host may
// destroy in any order.
//
// Memory: the handle objects themselves, a module's reflection tables and a blob's bytes come from
// the context's allocator hook (mem_alloc / mem_free); what lives behind them (the IR, option
// strings, temporaries while parsing) uses the C++ heap. docs/capi.md says the same to users.
#pragma once

#include <atomic>
#include <map>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "cache/crypto.h"
#include "cache/store.h"
#include "capi/compiled.h"
#include "ir/ir.h"
#include "ir/text.h"
#include "package/package.h"
#include "tri/tri.h"

struct tri_context_options {
  tri_log_fn log_fn = nullptr;
  void* log_user = nullptr;
  int32_t log_max_level = TRI_LOG_WARNING;
  void* alloc_self = nullptr;
  tri_alloc_fn alloc_fn = nullptr;
  tri_free_fn free_fn = nullptr;
  std::string cache_dir;
  bool cache_dir_set = false;  // unset: TRI_CACHE_DIR, then XDG_CACHE_HOME/tri, then ~/.cache/tri
  uint64_t cache_max_bytes = tri::cache::kDefaultMaxBytes;
  bool cache_shared = false;  // tri_context_options_set_cache_shared
  std::vector<tri::cache::PublicKey> trusted_keys;  // tri_context_options_add_trusted_key
  uint64_t interp_memory_limit = 0;  // bytes; 0: no budget
  uint32_t kernel_cache_capacity = 64;  // compiled specializations kept per module (LRU)
};

struct tri_context {
  std::atomic<int32_t> refs{1};
  tri_context_options options;
  // The CPU backend's workers, made on the first CPU launch (capi::context_pool). A pool that
  // could start no worker is not kept: the next launch tries again.
  std::mutex pool_mu;
  std::atomic<tri::ThreadPool*> pool_ready{nullptr};
  std::unique_ptr<tri::ThreadPool> pool;
  // Bumped by tri_context_cancel; a launch that sees it change since it began stops.
  std::atomic<uint64_t> cancel_epoch{0};
#ifndef TRI_RUNTIME_ONLY
  // The compiler half's (libtri): the disk cache, opened on the first compile
  // (capi::context_disk_cache), so that making a context touches no file and logs nothing; and
  // tuning results (capi/tune.cpp): by key (32 hex digits), the result's JSON and whether it was
  // imported (tri_tune_import) rather than measured or read from the disk here, and the
  // counters tri_tune_stat reads.
  std::once_flag disk_once;
  std::unique_ptr<tri::cache::DiskCache> disk;
  std::mutex tune_mu;
  std::map<std::string, std::pair<std::string, bool>> tune_results;
  std::atomic<uint64_t> tune_trials{0}, tune_stored{0}, tune_defaults{0}, tune_pruned{0}, tune_other_device{0};
#endif
  // Where `print` ops' text goes (the log at TRI_LOG_INFO), made once so that launches build
  // no std::function.
  tri::PrintSink print_sink = [this](const std::string& text) { log(TRI_LOG_INFO, text); };

  void log(int32_t level, const std::string& message) const;
};

namespace tri::capi {

// One parameter of a function as the reflection calls report it. Strings point into the
// module's string table; default_text is NULL when there is no default.
struct ParamRec {
  const char* name;
  const char* type_text;
  const char* default_text;
  int32_t kind;       // TRI_PARAM_*
  int32_t type_kind;  // TRI_TYPE_*
  int32_t dtype;      // TRI_DTYPE_*
  uint32_t align;
  uint32_t divisible;
  int32_t noalias;
};

struct FunctionRec {
  const char* name;
  int32_t kind;  // TRI_FUNCTION_*
  uint32_t first_param;
  uint32_t param_count;
};

}  // namespace tri::capi

// A verified module, immutable once created (so reads need no lock). Everything the reflection
// calls return is computed at creation into one block from the allocator hook: the function and
// parameter records, the function indices sorted by name (for find_function), and the strings.
struct tri_module {
  std::atomic<int32_t> refs{1};
  tri_context* context = nullptr;  // holds a reference
  std::string name;                // for messages
  // The IR (tri_module_create; a package that carries it); null for a package without it.
  std::unique_ptr<tri::ir::Module> ir;
  // The comments of the text it was created from (empty for binary input), for
  // tri_module_to_text_with_comments.
  std::unique_ptr<tri::ir::TextComments> comments;

  void* table = nullptr;  // the reflection block, from the allocator hook
  size_t table_size = 0;
  const tri::capi::FunctionRec* functions = nullptr;
  uint32_t function_count = 0;
  const tri::capi::ParamRec* params = nullptr;
  const uint32_t* by_name = nullptr;  // function indices sorted by name

  tri::capi::CompileCache kernels;  // compiled specializations, by key (capi/kernel.cpp)
  // The package it was loaded from (tri_module_load_package): its kernels' code.
  std::shared_ptr<const tri::package::Package> package;
};

struct tri_compile_options {
  tri::capi::CompileRequest req;
};

// A handle on a compiled specialization that its module caches (capi/kernel.cpp).
struct tri_kernel {
  tri_module* module;  // holds a reference
  std::shared_ptr<tri::capi::Compiled> compiled;
};

// Bytes handed to the caller. One allocation from the hook holds this header and then the bytes.
struct tri_blob {
  tri_context* context;  // holds a reference (its allocator frees the blob)
  size_t size;
  const unsigned char* bytes() const { return reinterpret_cast<const unsigned char*>(this + 1); }
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(this + 1); }
};

namespace tri::capi {

// Records `st` as the calling thread's last error (when it is an error) and returns its code.
tri_result set_error(const Status& st);
tri_result set_error(Code code, const std::string& message);
inline tri_result ok() { return TRI_OK; }

// The calling thread's last error message.
const std::string& last_error();

void context_retain(tri_context* c);
// A new module of `context` whose reflection tables hold `fns` (capi/reflection.cpp); `what`
// names the calling function in errors.
Status new_module(tri_context* context, const std::vector<package::Function>& fns, const char* what, tri_module** out);
// The reflection records of an IR module (capi/module.cpp).
std::vector<package::Function> describe_module(const ir::Module& m);
// The kernel the package of `module` holds for `req` (capi/package.cpp), loaded for this machine
// and kept in the module's kernel cache; *found is false (and the result Ok) when the package
// holds no such specialization. package_entries lists what it holds for `name`, for messages.
Status package_kernel(tri_module* module, const std::string& name, const CompileRequest& req,
                      std::shared_ptr<Compiled>* out, bool* found);
std::string package_entries(const tri_module* module, const std::string& name);
// TRI_OK when the module has its IR; else the error (NOT_FOUND) that `what` needs it.
tri_result module_ir(const tri_module* m, const char* what);
void context_release(tri_context* c);
void module_retain(tri_module* m);
// The context's thread pool, started on first use (one worker per hardware thread). Fewer
// workers than asked is logged at TRI_LOG_WARNING and used; none at all is Code::OutOfMemory
// (the launch that needed them fails; a later one tries again).
Status context_pool(tri_context* c, tri::ThreadPool** out);
void module_release(tri_module* m);
// The context's disk cache, opened on first use (disk_cache.cpp); never null, but may be off.
tri::cache::DiskCache* context_disk_cache(tri_context* c);
// A token that a tri_context_cancel made after this call requests (base/launch.h).
inline CancelToken cancel_token(const tri_context* c) {
  return CancelToken{&c->cancel_epoch, c->cancel_epoch.load(std::memory_order_acquire)};
}

// Makes a blob holding `bytes` from the context's allocator; the blob keeps the context alive.
// With no context (c NULL) the memory is malloc's. `what` names the calling function in the error message.
tri_result make_blob(tri_context* c, const std::string& bytes, const char* what, tri_blob** out);

// Memory from the options' allocator hook, or from the C library when there is none. mem_alloc
// returns NULL when the allocator fails; mem_free takes the size that was asked for.
void* mem_alloc(const tri_context_options& o, size_t size, size_t align);
void mem_free(const tri_context_options& o, void* ptr, size_t size);
inline void* mem_alloc(const tri_context* c, size_t size, size_t align) { return mem_alloc(c->options, size, align); }
inline void mem_free(const tri_context* c, void* ptr, size_t size) { mem_free(c->options, ptr, size); }

// Runs `body` (which returns tri_result) and turns any C++ exception into a result code, so
// nothing escapes the C boundary.
template <typename F>
tri_result guard(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_error(Code::OutOfMemory, "out of memory");
  } catch (const std::exception& e) {
    return set_error(Code::Internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(Code::Internal, "internal error: unknown exception");
  }
}

}  // namespace tri::capi

namespace tri::capi {
// The name of the exported function a check is in, from the compiler's __PRETTY_FUNCTION__
// ("tri_result tri_module_create(tri_context*, ...)::<lambda()>" -> "tri_module_create"), so
// a check inside guard()'s lambda names the API function, not "operator()".
std::string api_function_name(const char* pretty);
}  // namespace tri::capi

// Fails the calling function with TRI_ERROR_INVALID_ARGUMENT when `ptr` is NULL.
#define TRI_CHECK_ARG(ptr)                                                                          \
  do {                                                                                              \
    if ((ptr) == nullptr)                                                                           \
      return ::tri::capi::set_error(::tri::Code::InvalidArgument,                                   \
                                    ::tri::capi::api_function_name(__PRETTY_FUNCTION__) +           \
                                        ": argument '" #ptr "' is NULL");                           \
  } while (0)
