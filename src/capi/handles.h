// The objects behind the C API's opaque handles, and the glue every exported function shares:
// argument checks that set the thread's last error, and the wrapper that keeps C++ exceptions
// from crossing the boundary.
//
// Lifetime: handles are reference counted. tri_X_destroy drops the caller's reference; a child
// holds a reference on its parent (a module on its context), so a host may destroy in any order.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "base/status.h"
#include "tri/tri.h"

struct tri_context_options {
  tri_log_fn log_fn = nullptr;
  void* log_user = nullptr;
  int32_t log_max_level = TRI_LOG_WARNING;
  void* alloc_self = nullptr;
  tri_alloc_fn alloc_fn = nullptr;
  tri_free_fn free_fn = nullptr;
  std::string cache_dir;
};

struct tri_context {
  std::atomic<int32_t> refs{1};
  tri_context_options options;

  void log(int32_t level, const std::string& message) const;
};

namespace tri::capi {

// Records `st` as the calling thread's last error (when it is an error) and returns its code.
tri_result set_error(const Status& st);
tri_result set_error(Code code, const std::string& message);
inline tri_result ok() { return TRI_OK; }

void context_retain(tri_context* c);
void context_release(tri_context* c);

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

// Fails the calling function with TRI_ERROR_INVALID_ARGUMENT when `ptr` is NULL.
#define TRI_CHECK_ARG(ptr)                                                                          \
  do {                                                                                              \
    if ((ptr) == nullptr)                                                                           \
      return ::tri::capi::set_error(::tri::Code::InvalidArgument,                                   \
                                    std::string(__func__) + ": argument '" #ptr "' is NULL");       \
  } while (0)
