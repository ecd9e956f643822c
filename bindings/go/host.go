// Host memory in C's heap, for launch plans: a plan keeps its arguments' addresses between
// calls, which the cgo rules forbid for Go memory (Go 1.19 has no runtime.Pinner), so the host
// buffers of a plan come from here.

package tri

/*
#include <stdlib.h>
*/
import "C"

import (
	"sync"
	"unsafe"
)

// HostMemory is zeroed host memory from C's heap, of Count elements of one DType: an argument
// of host kernels, in launches and in launch plans. HostSlice views it as a Go slice. Free
// releases it; it is not garbage-collected (a plan or a view may still be using it).
type HostMemory struct {
	mu    sync.Mutex
	ptr   unsafe.Pointer
	bytes uint64
	dtype DType
}

var dtypeSizes = map[DType]uint64{I1: 1, I8: 1, I16: 2, I32: 4, I64: 8, F16: 2, BF16: 2, F32: 4, F64: 8, F8E4M3: 1,
	F8E5M2: 1}

// AllocHost allocates count elements of dtype, zeroed.
func AllocHost(dtype DType, count int) (*HostMemory, error) {
	size, ok := dtypeSizes[dtype]
	if !ok || count < 0 {
		return nil, errorf(CodeInvalidArgument, "AllocHost: %d elements of %v", count, dtype)
	}
	n := uint64(count) * size
	p := C.calloc(C.size_t(n+1), 1) // +1: a distinct, non-null address for 0 elements
	if p == nil {
		return nil, errorf(CodeOutOfMemory, "AllocHost: %d bytes", n)
	}
	return &HostMemory{ptr: p, bytes: n, dtype: dtype}, nil
}

func (m *HostMemory) raw() (uintptr, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uintptr(m.ptr), m.bytes
}

// DType is the element type; Bytes the size.
func (m *HostMemory) DType() DType  { return m.dtype }
func (m *HostMemory) Bytes() uint64 { return m.bytes }

// Free releases the memory; views and plans that use it must be done with it. Idempotent.
func (m *HostMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.free(m.ptr)
		m.ptr, m.bytes = nil, 0
	}
}

// HostSlice views m as a []T (T of the element type's size: []float32 for F32). The view is
// valid until m.Free; it panics when T's size is not the element type's.
func HostSlice[T any](m *HostMemory) []T {
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if size != dtypeSizes[m.dtype] {
		panic("tri.HostSlice: the element type's size is not " + m.dtype.String() + "'s")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr == nil || m.bytes == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(m.ptr), m.bytes/size)
}
