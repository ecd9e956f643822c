// The context options only the compiler half reads (libtri): the disk cache's (its directory,
// whether it is shared, its size, the keys whose bundles it trusts) and the interpreter's memory
// budget. The other options are capi/context.cpp's.
#include <cstring>

#include "capi/handles.h"

using tri::capi::guard;
using tri::capi::set_error;
using tri::Code;

extern "C" {

TRI_API tri_result tri_context_options_set_cache_dir(tri_context_options* options, const char* path) {
  return guard([&] {
    TRI_CHECK_ARG(options);
    options->cache_dir = path ? path : "";
    options->cache_dir_set = path != nullptr;
    return TRI_OK;
  });
}

TRI_API tri_result tri_context_options_set_cache_shared(tri_context_options* options, int32_t shared) {
  TRI_CHECK_ARG(options);
  options->cache_shared = shared != 0;
  return TRI_OK;
}

TRI_API tri_result tri_context_options_add_trusted_key(tri_context_options* options, const uint8_t* public_key,
                                                      size_t public_key_bytes) {
  TRI_CHECK_ARG(options);
  TRI_CHECK_ARG(public_key);
  return guard([&] {
    if (public_key_bytes != TRI_SIGN_PUBLIC_KEY_BYTES)
      return set_error(Code::InvalidArgument, "tri_context_options_add_trusted_key: a public key has " +
                                                  std::to_string(TRI_SIGN_PUBLIC_KEY_BYTES) + " bytes, not " +
                                                  std::to_string(public_key_bytes));
    tri::cache::PublicKey k;
    std::memcpy(k.data(), public_key, k.size());
    options->trusted_keys.push_back(k);
    return TRI_OK;
  });
}

TRI_API tri_result tri_context_options_set_cache_max_bytes(tri_context_options* options, uint64_t max_bytes) {
  TRI_CHECK_ARG(options);
  options->cache_max_bytes = max_bytes;
  return TRI_OK;
}

TRI_API tri_result tri_context_options_set_interp_memory_limit(tri_context_options* options, uint64_t bytes) {
  TRI_CHECK_ARG(options);
  options->interp_memory_limit = bytes;
  return TRI_OK;
}

}  // extern "C"
