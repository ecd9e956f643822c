// Device memory for running kernels on the "cuda" target (tri run, tri test, the conformance
// suite): the C API launches on memory the caller owns, so these programs allocate device
// buffers through the CUDA driver themselves (loaded at run time, like libtri does), copy the
// inputs in and the outputs back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tri_tool {

// Whether a CUDA driver and device are usable; makes device 0's primary context current on the
// calling thread. `why` says what is missing.
bool device_init(std::string* why);
// A device buffer of `bytes` with `host`'s contents (0 on failure).
uint64_t device_upload(const void* host, size_t bytes);
// Copies a device buffer back (after synchronizing the device) and frees it.
bool device_download_free(uint64_t dev, void* host, size_t bytes);
// Waits for the device; false (with the driver's error name) when a kernel failed.
bool device_sync(std::string* error);

}  // namespace tri_tool
