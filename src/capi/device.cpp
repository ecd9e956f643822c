// CUDA device queries of the C API: tri_device_count, tri_device_attribute, tri_device_name. They
// read the process-wide driver (src/cuda/driver.h), so a context is only checked, not used; the
// context parameter keeps the calls' shape open to per-context device selection later.
#include <cstring>

#include "capi/handles.h"
#include "cuda/driver.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace {

// The device's info, with the index checked against the count.
tri_result find_device(const char* fn, uint32_t device, const cuda::DeviceInfo** out) {
  int n = 0;
  Status st = cuda::device_count(&n);
  if (!st.is_ok()) return set_error(st);
  if (device >= uint32_t(n))
    return set_error(Code::InvalidArgument, std::string(fn) + ": device " + std::to_string(device) +
                                                " does not exist (" + std::to_string(n) + " CUDA device" +
                                                (n == 1 ? "" : "s") + "; tri_device_count tells how many)");
  return set_error(cuda::device_info(int(device), out));
}

}  // namespace

extern "C" {

TRI_API tri_result tri_device_count(tri_context* context, uint32_t* out_count) {
  return guard([&] {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(out_count);
    int n = 0;
    Status st = cuda::device_count(&n);
    if (!st.is_ok()) return set_error(st);
    *out_count = uint32_t(n);
    return TRI_OK;
  });
}

TRI_API tri_result tri_device_attribute(tri_context* context, uint32_t device, int32_t attribute,
                                        int64_t* out_value) {
  return guard([&] {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(out_value);
    if (attribute < TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR || attribute > TRI_DEVICE_ATTR_MAX_PTX_VERSION)
      return set_error(Code::InvalidArgument, "tri_device_attribute: attribute " + std::to_string(attribute) +
                                                  " is not a TRI_DEVICE_ATTR_* value (0..10)");
    const cuda::DeviceInfo* d = nullptr;
    tri_result r = find_device("tri_device_attribute", device, &d);
    if (r != TRI_OK) return r;
    int64_t v = 0;
    switch (attribute) {
      case TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR: v = d->cc_major; break;
      case TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR: v = d->cc_minor; break;
      case TRI_DEVICE_ATTR_SM_COUNT: v = d->sm_count; break;
      case TRI_DEVICE_ATTR_SHARED_PER_BLOCK: v = d->shared_per_block; break;
      case TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN: v = d->shared_per_block_optin; break;
      case TRI_DEVICE_ATTR_SHARED_PER_SM: v = d->shared_per_sm; break;
      case TRI_DEVICE_ATTR_L2_SIZE: v = d->l2_bytes; break;
      case TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK: v = d->max_threads_per_block; break;
      case TRI_DEVICE_ATTR_WARP_SIZE: v = d->warp_size; break;
      case TRI_DEVICE_ATTR_DRIVER_VERSION:
      case TRI_DEVICE_ATTR_MAX_PTX_VERSION: {
        int version = 0;
        Status st = cuda::driver_version(&version);
        if (!st.is_ok()) return set_error(st);
        v = attribute == TRI_DEVICE_ATTR_DRIVER_VERSION ? version : cuda::max_ptx_for_driver(version).number();
        break;
      }
    }
    *out_value = v;
    return TRI_OK;
  });
}

TRI_API tri_result tri_device_name(tri_context* context, uint32_t device, char* buffer, size_t capacity,
                                   size_t* out_size) {
  return guard([&] {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(out_size);
    if (!buffer && capacity > 0)
      return set_error(Code::InvalidArgument, "tri_device_name: buffer is NULL but capacity is " +
                                                  std::to_string(capacity) + " (pass capacity 0 to ask for the size)");
    const cuda::DeviceInfo* d = nullptr;
    tri_result r = find_device("tri_device_name", device, &d);
    if (r != TRI_OK) return r;
    const std::string& name = d->name;
    if (buffer && capacity > 0) {
      size_t n = name.size() < capacity - 1 ? name.size() : capacity - 1;
      std::memcpy(buffer, name.data(), n);
      buffer[n] = '\0';
    }
    *out_size = name.size() + 1;
    return TRI_OK;
  });
}

}  // extern "C"
