// The few CUDA driver calls the example needs, resolved at run time with dlopen (no CUDA
// toolkit at build time, as Tri itself does). Handles travel as integers (uintptr_t), Go slices
// only as direct call arguments of the copies, which the driver is done with when they return
// (pageable memory) or before the stream is synchronized.

package main

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

static int (*p_cuInit)(unsigned);
static int (*p_cuDeviceGet)(int*, int);
static int (*p_cuDevicePrimaryCtxRetain)(void**, int);
static int (*p_cuDevicePrimaryCtxRelease)(int);
static int (*p_cuCtxPushCurrent)(void*);
static int (*p_cuCtxPopCurrent)(void**);
static int (*p_cuMemAlloc)(uint64_t*, size_t);
static int (*p_cuMemFree)(uint64_t);
static int (*p_cuMemcpyHtoDAsync)(uint64_t, const void*, size_t, void*);
static int (*p_cuMemcpyDtoHAsync)(void*, uint64_t, size_t, void*);
static int (*p_cuStreamCreate)(void**, unsigned);
static int (*p_cuStreamSynchronize)(void*);
static int (*p_cuStreamDestroy)(void*);

// 0: loaded; -1: libcuda.so.1 does not load; -2: an entry point is missing.
static int cu_load(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return -1;
#define SYM(p, name) if (!(*(void**)&p = dlsym(lib, name))) return -2
  SYM(p_cuInit, "cuInit");
  SYM(p_cuDeviceGet, "cuDeviceGet");
  SYM(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  SYM(p_cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  SYM(p_cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  SYM(p_cuMemAlloc, "cuMemAlloc_v2");
  SYM(p_cuMemFree, "cuMemFree_v2");
  SYM(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  SYM(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  SYM(p_cuStreamCreate, "cuStreamCreate");
  SYM(p_cuStreamSynchronize, "cuStreamSynchronize");
  SYM(p_cuStreamDestroy, "cuStreamDestroy_v2");
#undef SYM
  return 0;
}

static int cu_init(void) { return p_cuInit(0); }
static int cu_device_get(int* dev) { return p_cuDeviceGet(dev, 0); }
static int cu_retain(uintptr_t* ctx, int dev) { void* c; int r = p_cuDevicePrimaryCtxRetain(&c, dev); *ctx = (uintptr_t)c; return r; }
static int cu_release(int dev) { return p_cuDevicePrimaryCtxRelease(dev); }
static int cu_push(uintptr_t ctx) { return p_cuCtxPushCurrent((void*)ctx); }
static int cu_pop(void) { void* c; return p_cuCtxPopCurrent(&c); }
static int cu_alloc(uint64_t* p, size_t n) { return p_cuMemAlloc(p, n); }
static int cu_free(uint64_t p) { return p_cuMemFree(p); }
static int cu_upload(uint64_t dst, const void* src, size_t n, uintptr_t s) { return p_cuMemcpyHtoDAsync(dst, src, n, (void*)s); }
static int cu_download(void* dst, uint64_t src, size_t n, uintptr_t s) { return p_cuMemcpyDtoHAsync(dst, src, n, (void*)s); }
static int cu_stream(uintptr_t* s) { void* p; int r = p_cuStreamCreate(&p, 1); *s = (uintptr_t)p; return r; }  // non-blocking
static int cu_sync(uintptr_t s) { return p_cuStreamSynchronize((void*)s); }
static int cu_stream_destroy(uintptr_t s) { return p_cuStreamDestroy((void*)s); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// gpu is device 0's primary context, current on the calling goroutine's OS thread (locked)
// while it lives.
type gpu struct {
	device C.int
	ctx    C.uintptr_t
}

func cuCheck(r C.int, what string) error {
	if r != 0 {
		return fmt.Errorf("%s failed with CUDA error %d", what, int(r))
	}
	return nil
}

// openGPU returns nil, nil when there is no driver or no device. It locks the goroutine to its
// OS thread (the driver's current context is per thread) until close.
func openGPU() (*gpu, error) {
	switch C.cu_load() {
	case -1:
		return nil, nil
	case -2:
		return nil, fmt.Errorf("libcuda.so.1 lacks an entry point this example uses")
	}
	if r := C.cu_init(); r == 100 { // CUDA_ERROR_NO_DEVICE
		return nil, nil
	} else if err := cuCheck(r, "cuInit"); err != nil {
		return nil, err
	}
	g := &gpu{}
	if C.cu_device_get(&g.device) != 0 {
		return nil, nil
	}
	if err := cuCheck(C.cu_retain(&g.ctx, g.device), "cuDevicePrimaryCtxRetain"); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	if err := cuCheck(C.cu_push(g.ctx), "cuCtxPushCurrent"); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return g, nil
}

func (g *gpu) close() {
	C.cu_pop()
	C.cu_release(g.device)
	runtime.UnlockOSThread()
}

func (g *gpu) alloc(bytes int) (uint64, error) {
	var p C.uint64_t
	err := cuCheck(C.cu_alloc(&p, C.size_t(bytes)), "cuMemAlloc")
	return uint64(p), err
}

func (g *gpu) free(p uint64) { C.cu_free(C.uint64_t(p)) }

func (g *gpu) stream() (uintptr, error) {
	var s C.uintptr_t
	err := cuCheck(C.cu_stream(&s), "cuStreamCreate")
	return uintptr(s), err
}

func (g *gpu) destroyStream(s uintptr) { C.cu_stream_destroy(C.uintptr_t(s)) }

func (g *gpu) upload(dst uint64, src []float32, s uintptr) error {
	return cuCheck(C.cu_upload(C.uint64_t(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)*4), C.uintptr_t(s)),
		"cuMemcpyHtoDAsync")
}

func (g *gpu) download(dst []float32, src uint64, s uintptr) error {
	return cuCheck(C.cu_download(unsafe.Pointer(&dst[0]), C.uint64_t(src), C.size_t(len(dst)*4), C.uintptr_t(s)),
		"cuMemcpyDtoHAsync")
}

func (g *gpu) sync(s uintptr) error { return cuCheck(C.cu_sync(C.uintptr_t(s)), "cuStreamSynchronize") }
