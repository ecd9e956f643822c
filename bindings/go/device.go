// CUDA devices as the "cuda" target sees them (tri_device_*), and the memory and streams GPU
// launches take: device pointers and CUstream handles are integers here, never Go pointers.
// Without a loadable driver every query is ErrUnsupported with the library's reason; with a
// driver and no GPU the count is 0.

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// DevicePtr is CUDA device memory (a CUdeviceptr) for kernels of the "cuda" target: its
// address, its size in bytes (0: unknown) and its element type. The caller keeps it allocated
// until the work queued on it is done.
type DevicePtr struct {
	Ptr   uint64
	Bytes uint64
	DType DType
}

// Stream is a CUDA stream handle (a CUstream); 0 is the default stream. Host targets take only 0.
type Stream uintptr

// DeviceAttr names what Context.DeviceAttribute reads (TRI_DEVICE_ATTR_*); sizes in bytes.
type DeviceAttr int32

const (
	AttrComputeCapabilityMajor DeviceAttr = C.TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor DeviceAttr = C.TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR
	AttrSMCount                DeviceAttr = C.TRI_DEVICE_ATTR_SM_COUNT
	AttrSharedPerBlock         DeviceAttr = C.TRI_DEVICE_ATTR_SHARED_PER_BLOCK
	AttrSharedPerBlockOptin    DeviceAttr = C.TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN
	AttrSharedPerSM            DeviceAttr = C.TRI_DEVICE_ATTR_SHARED_PER_SM
	AttrL2Size                 DeviceAttr = C.TRI_DEVICE_ATTR_L2_SIZE
	AttrMaxThreadsPerBlock     DeviceAttr = C.TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK
	AttrWarpSize               DeviceAttr = C.TRI_DEVICE_ATTR_WARP_SIZE
	// AttrDriverVersion is cuDriverGetVersion's: 1000 * major + 10 * minor (12040 = 12.4).
	AttrDriverVersion DeviceAttr = C.TRI_DEVICE_ATTR_DRIVER_VERSION
	// AttrMaxPTXVersion is the highest PTX ISA the driver accepts: 10 * major + minor (84 = 8.4).
	AttrMaxPTXVersion DeviceAttr = C.TRI_DEVICE_ATTR_MAX_PTX_VERSION
)

// Device is a CUDA device with its attributes (Context.Device).
type Device struct {
	Index               int
	Name                string
	ComputeCapability   [2]int
	SMCount             int
	SharedPerBlock      int64
	SharedPerBlockOptin int64
	SharedPerSM         int64
	L2Size              int64
	MaxThreadsPerBlock  int
	WarpSize            int
	DriverVersion       int
	MaxPTXVersion       int
}

// Arch is the architecture's name for CompileOptions.Arch ("sm_90").
func (d Device) Arch() string {
	return fmt.Sprintf("sm_%d%d", d.ComputeCapability[0], d.ComputeCapability[1])
}

// DeviceCount is how many CUDA devices the driver sees (0 with a driver and no GPU);
// ErrUnsupported, with the reason, when no CUDA driver can be loaded.
func (c *Context) DeviceCount() (int, error) {
	var n C.uint32_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_device_count(raw, &n) })
	})
	return int(n), err
}

// DeviceAttribute reads one attribute of device (0-based, as the driver numbers them).
func (c *Context) DeviceAttribute(device int, attr DeviceAttr) (int64, error) {
	var v C.int64_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_device_attribute(raw, C.uint32_t(device), C.int32_t(attr), &v) })
	})
	return int64(v), err
}

// DeviceName is the device's name ("NVIDIA H100 80GB HBM3").
func (c *Context) DeviceName(device int) (string, error) {
	var name string
	err := c.use(func(raw *C.tri_context) error {
		var size C.size_t
		if err := call(func() C.tri_result { return C.tri_device_name(raw, C.uint32_t(device), nil, 0, &size) }); err != nil {
			return err
		}
		buf := (*C.char)(C.malloc(size))
		defer C.free(unsafe.Pointer(buf))
		if err := call(func() C.tri_result { return C.tri_device_name(raw, C.uint32_t(device), buf, size, &size) }); err != nil {
			return err
		}
		name = C.GoString(buf)
		return nil
	})
	return name, err
}

// Device is device with every attribute.
func (c *Context) Device(device int) (Device, error) {
	d := Device{Index: device}
	var err error
	if d.Name, err = c.DeviceName(device); err != nil {
		return Device{}, err
	}
	a := map[DeviceAttr]int64{}
	for _, attr := range []DeviceAttr{AttrComputeCapabilityMajor, AttrComputeCapabilityMinor, AttrSMCount,
		AttrSharedPerBlock, AttrSharedPerBlockOptin, AttrSharedPerSM, AttrL2Size, AttrMaxThreadsPerBlock, AttrWarpSize,
		AttrDriverVersion, AttrMaxPTXVersion} {
		if a[attr], err = c.DeviceAttribute(device, attr); err != nil {
			return Device{}, err
		}
	}
	d.ComputeCapability = [2]int{int(a[AttrComputeCapabilityMajor]), int(a[AttrComputeCapabilityMinor])}
	d.SMCount, d.WarpSize, d.MaxThreadsPerBlock = int(a[AttrSMCount]), int(a[AttrWarpSize]), int(a[AttrMaxThreadsPerBlock])
	d.SharedPerBlock, d.SharedPerBlockOptin = a[AttrSharedPerBlock], a[AttrSharedPerBlockOptin]
	d.SharedPerSM, d.L2Size = a[AttrSharedPerSM], a[AttrL2Size]
	d.DriverVersion, d.MaxPTXVersion = int(a[AttrDriverVersion]), int(a[AttrMaxPTXVersion])
	return d, nil
}

// Devices lists every CUDA device (none with a driver and no GPU).
func (c *Context) Devices() ([]Device, error) {
	n, err := c.DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]Device, n)
	for i := range out {
		if out[i], err = c.Device(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}
