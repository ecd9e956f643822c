// Device queries of the C API: tri_device_count, tri_device_attribute, tri_device_name. They ask
// the build's device target (target.h: target::device_target(), "cuda"), which reads its
// process-wide driver, so a context is only checked, not used; the context parameter keeps the
// calls' shape open to per-context device selection later.
#include <cstring>

#include "capi/handles.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace {

// The build's device target, or the error that it has none.
Status devices(const target::Target** out) {
  *out = target::device_target();
  if (!*out) return Status(Code::Unsupported, "this build has no GPU target (it was built without the \"cuda\" target)");
  return Status::ok();
}

Status device_count(int* n) {
  const target::Target* t = nullptr;
  TRI_RETURN_IF_ERROR(devices(&t));
  return t->device_count(n);
}

// The device's info, with the index checked against the count.
tri_result find_device(const char* fn, uint32_t device, target::DeviceInfo* out) {
  int n = 0;
  Status st = device_count(&n);
  if (!st.is_ok()) return set_error(st);
  if (device >= uint32_t(n))
    return set_error(Code::InvalidArgument, std::string(fn) + ": device " + std::to_string(device) +
                                                " does not exist (" + std::to_string(n) + " CUDA device" +
                                                (n == 1 ? "" : "s") + "; tri_device_count tells how many)");
  return set_error(target::device_target()->device_info(int(device), out));
}

}  // namespace

extern "C" {

TRI_API tri_result tri_device_count(tri_context* context, uint32_t* out_count) {
  return guard([&] {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(out_count);
    int n = 0;
    Status st = device_count(&n);
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
    target::DeviceInfo info;
    const target::DeviceInfo* d = &info;
    tri_result r = find_device("tri_device_attribute", device, &info);
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
        int version = 0, max_ptx = 0;
        Status st = target::device_target()->driver_version(&version, &max_ptx);
        if (!st.is_ok()) return set_error(st);
        v = attribute == TRI_DEVICE_ATTR_DRIVER_VERSION ? version : max_ptx;
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
    target::DeviceInfo d;
    tri_result r = find_device("tri_device_name", device, &d);
    if (r != TRI_OK) return r;
    const std::string& name = d.name;
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
