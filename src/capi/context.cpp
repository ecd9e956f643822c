// tri_version, results, the thread-local last error, context options, contexts, and the memory
// helpers that route the C API's own allocations through a context's allocator hook.
#include <cstdlib>
#include <cctype>
#include <cstring>

#include "capi/handles.h"

static_assert(TRI_OK == static_cast<int>(tri::Code::Ok), "result codes must match base/status.h");
static_assert(TRI_ERROR_PARSE == static_cast<int>(tri::Code::Parse), "result codes must match");
static_assert(TRI_ERROR_INTERNAL == static_cast<int>(tri::Code::Internal), "result codes must match");
static_assert(TRI_ERROR_CANCELLED == static_cast<int>(tri::Code::Cancelled), "result codes must match");
static_assert(TRI_ERROR_UNTRUSTED == static_cast<int>(tri::Code::Untrusted), "result codes must match");

namespace tri::capi {
namespace {
thread_local std::string t_last_error;
}

tri_result set_error(const Status& st) {
  if (st.is_ok()) return TRI_OK;
  t_last_error = st.message();
  return static_cast<tri_result>(st.code());
}

tri_result set_error(Code code, const std::string& message) { return set_error(Status(code, message)); }

const std::string& last_error() { return t_last_error; }

std::string api_function_name(const char* pretty) {
  const char* open = std::strchr(pretty, '(');
  if (!open) return pretty;
  const char* start = open;
  while (start > pretty && (std::isalnum(static_cast<unsigned char>(start[-1])) || start[-1] == '_')) --start;
  return std::string(start, open);
}

void* mem_alloc(const tri_context_options& o, size_t size, size_t align) {
  if (o.alloc_fn) return o.alloc_fn(o.alloc_self, size, align);
  if (align <= alignof(std::max_align_t)) return std::malloc(size ? size : 1);
  size_t rounded = (size + align - 1) / align * align;  // aligned_alloc wants a multiple of align
  return std::aligned_alloc(align, rounded ? rounded : align);
}

void mem_free(const tri_context_options& o, void* ptr, size_t size) {
  if (!ptr) return;
  if (o.free_fn)
    o.free_fn(o.alloc_self, ptr, size);
  else
    std::free(ptr);
}

Status context_pool(tri_context* c, ThreadPool** out) {
  if ((*out = c->pool_ready.load(std::memory_order_acquire))) return Status::ok();
  std::string warning;
  {
    std::lock_guard<std::mutex> lock(c->pool_mu);
    if (!c->pool) {
      auto pool = std::make_unique<ThreadPool>();
      if (pool->size() == 0)
        return Status(Code::OutOfMemory, "the CPU target cannot start its worker threads: " + pool->start_error() +
                                             "; raise the process's address-space or thread limit, or destroy "
                                             "contexts that are not in use");
      if (!pool->start_error().empty()) warning = "the CPU target runs with fewer threads: " + pool->start_error();
      c->pool = std::move(pool);
      c->pool_ready.store(c->pool.get(), std::memory_order_release);
    }
    *out = c->pool.get();
  }
  if (!warning.empty()) c->log(TRI_LOG_WARNING, warning);
  return Status::ok();
}

void context_retain(tri_context* c) { c->refs.fetch_add(1, std::memory_order_relaxed); }

void context_release(tri_context* c) {
  if (c && c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The context lives in memory from its own allocator: keep a copy of the hook to free it.
    tri_context_options hook;
    hook.alloc_self = c->options.alloc_self;
    hook.alloc_fn = c->options.alloc_fn;
    hook.free_fn = c->options.free_fn;
    c->~tri_context();
    mem_free(hook, c, sizeof(tri_context));
  }
}

}  // namespace tri::capi

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

// The callback may call the library, and a call that fails there sets the thread's last error;
// the message of the call that is logging (which may be about to fail) must survive it.
void tri_context::log(int32_t level, const std::string& message) const {
  if (!options.log_fn || level > options.log_max_level) return;
  std::string saved = tri::capi::t_last_error;
  options.log_fn(options.log_user, level, message.c_str());
  tri::capi::t_last_error.swap(saved);
}

extern "C" {

TRI_API uint32_t tri_version(void) { return TRI_VERSION_NUMBER; }

TRI_API const char* tri_result_name(tri_result result) {
  if (result < 0 || result > static_cast<int>(Code::Untrusted)) return "TRI_ERROR_UNKNOWN";
  return code_name(static_cast<Code>(result));
}

TRI_API size_t tri_last_error_message(char* buffer, size_t capacity) {
  const std::string& m = tri::capi::t_last_error;
  if (buffer && capacity > 0) {
    size_t n = m.size() < capacity - 1 ? m.size() : capacity - 1;
    std::memcpy(buffer, m.data(), n);
    buffer[n] = '\0';
  }
  return m.size() + 1;
}

TRI_API tri_result tri_context_options_create(tri_context_options** out_options) {
  return guard([&] {
    TRI_CHECK_ARG(out_options);
    *out_options = new tri_context_options();
    return TRI_OK;
  });
}

TRI_API void tri_context_options_destroy(tri_context_options* options) { delete options; }

TRI_API tri_result tri_context_options_set_log(tri_context_options* options, tri_log_fn fn, void* user,
                                              int32_t max_level) {
  return guard([&] {
    TRI_CHECK_ARG(options);
    if (max_level < TRI_LOG_ERROR || max_level > TRI_LOG_DEBUG)
      return set_error(Code::InvalidArgument, "tri_context_options_set_log: max_level " +
                                                  std::to_string(max_level) + " is not a TRI_LOG_* level (0..3)");
    options->log_fn = fn;
    options->log_user = user;
    options->log_max_level = max_level;
    return TRI_OK;
  });
}

TRI_API tri_result tri_context_options_set_allocator(tri_context_options* options, void* self, tri_alloc_fn alloc,
                                                    tri_free_fn free_fn) {
  return guard([&] {
    TRI_CHECK_ARG(options);
    if ((alloc == nullptr) != (free_fn == nullptr))
      return set_error(Code::InvalidArgument,
                       "tri_context_options_set_allocator: give both alloc and free, or neither");
    options->alloc_self = self;
    options->alloc_fn = alloc;
    options->free_fn = free_fn;
    return TRI_OK;
  });
}

TRI_API tri_result tri_context_options_set_kernel_cache_capacity(tri_context_options* options, uint32_t count) {
  TRI_CHECK_ARG(options);
  options->kernel_cache_capacity = count;
  return TRI_OK;
}

TRI_API tri_result tri_context_create(const tri_context_options* options, uint32_t header_version,
                                      tri_context** out_context) {
  return guard([&] {
    TRI_CHECK_ARG(out_context);
    uint32_t major = header_version / 10000, minor = header_version / 100 % 100;
    if (major != TRI_VERSION_MAJOR || minor > TRI_VERSION_MINOR)
      return set_error(Code::UnsupportedVersion,
                       "tri_context_create: the caller was built against tri.h version " +
                           std::to_string(major) + "." + std::to_string(minor) + ", but this library is " +
                           std::to_string(TRI_VERSION_MAJOR) + "." + std::to_string(TRI_VERSION_MINOR) +
                           "; rebuild against the installed header or install a matching library");
    tri_context_options defaults;
    const tri_context_options& o = options ? *options : defaults;
    void* mem = tri::capi::mem_alloc(o, sizeof(tri_context), alignof(tri_context));
    if (!mem) return set_error(Code::OutOfMemory, "tri_context_create: the allocator returned NULL");
    tri_context* c = new (mem) tri_context();  // cannot throw: members default-construct
    try {
      c->options = o;  // copies the cache directory string
    } catch (...) {
      c->~tri_context();
      tri::capi::mem_free(o, mem, sizeof(tri_context));
      throw;
    }
    *out_context = c;
    return TRI_OK;
  });
}

TRI_API void tri_context_destroy(tri_context* context) { tri::capi::context_release(context); }

TRI_API tri_result tri_context_cancel(tri_context* context) {
  TRI_CHECK_ARG(context);
  // Launches compare the counter with its value when they began (capi::cancel_token).
  context->cancel_epoch.fetch_add(1, std::memory_order_acq_rel);
  return TRI_OK;
}

}  // extern "C"
