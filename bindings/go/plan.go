// Prepared launches (tri_launch_plan_*): a kernel bound to a grid, a stream and arguments once,
// for hot loops that change one thing between launches. The C plan keeps the arguments'
// addresses between calls, so its pointers are C or device memory (HostMemory, Buffers of C
// memory, DevicePtrs), never Go slices.

package tri

/*
#include <tri/tri.h>
tri_result tri_go_plan_create(const tri_kernel* kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                              const tri_arg* args, uint32_t n, tri_launch_plan** out);
tri_result tri_go_plan_set_stream(tri_launch_plan* plan, uintptr_t stream);
tri_result tri_go_plan_launch(uintptr_t plan);
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// LaunchPlan is a prepared launch (Kernel.Plan, Kernel.PlanOn). It keeps its kernel alive and
// the HostMemory it was given reachable. The C plan is not thread-safe; this type serializes its
// calls with a mutex, so it may be shared.
type LaunchPlan struct {
	mu     sync.Mutex
	raw    *C.tri_launch_plan
	kernel *Kernel
	keep   []interface{}
}

// Plan prepares a launch on the default stream: the grid and arguments checked and encoded once;
// SetArg, SetGrid and SetStream change one thing and Launch runs it with no checking or encoding.
// Pointer arguments are DevicePtrs ("cuda") or HostMemory and Buffers of C memory (host kernels).
func (k *Kernel) Plan(grid Grid, args ...interface{}) (*LaunchPlan, error) {
	return k.PlanOn(0, grid, args...)
}

// PlanOn prepares a launch on a CUDA stream (host kernels take only stream 0).
func (k *Kernel) PlanOn(stream Stream, grid Grid, args ...interface{}) (*LaunchPlan, error) {
	if err := k.checkCount(args); err != nil {
		return nil, err
	}
	raw := make([]C.tri_arg, len(args)+1) // holds no Go pointer: see encode's forPlan
	p := &LaunchPlan{kernel: k, keep: make([]interface{}, len(args))}
	for i, v := range args {
		e, err := k.encode(i, v, true)
		if err != nil {
			return nil, err
		}
		raw[i], p.keep[i] = e.raw, e.keep
	}
	err := k.use(func(kr *C.tri_kernel) error {
		return call(func() C.tri_result {
			return C.tri_go_plan_create(kr, C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z),
				C.uintptr_t(stream), &raw[0], C.uint32_t(len(args)), &p.raw)
		})
	})
	if err != nil {
		return nil, err
	}
	k.ctx.ref()
	runtime.SetFinalizer(p, (*LaunchPlan).Close)
	return p, nil
}

func (p *LaunchPlan) use(f func(*C.tri_launch_plan) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.raw == nil {
		return errorf(CodeInvalidArgument, "the launch plan of kernel @%s is closed (Close was called)", p.kernel.name)
	}
	return f(p.raw)
}

// SetArg replaces argument i, checked as a launch checks it; a refused value changes nothing.
func (p *LaunchPlan) SetArg(i int, v interface{}) error {
	e, err := p.kernel.encode(i, v, true)
	if err != nil {
		return err
	}
	return p.use(func(raw *C.tri_launch_plan) error {
		a := e.raw
		if err := call(func() C.tri_result { return C.tri_launch_plan_set_arg(raw, C.uint32_t(i), &a) }); err != nil {
			return err
		}
		p.keep[i] = e.keep
		return nil
	})
}

// SetGrid replaces the grid (a zero dimension makes launches empty).
func (p *LaunchPlan) SetGrid(grid Grid) error {
	return p.use(func(raw *C.tri_launch_plan) error {
		return call(func() C.tri_result {
			return C.tri_launch_plan_set_grid(raw, C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z))
		})
	})
}

// SetStream moves later launches to stream (0: the default stream; host kernels take only 0).
func (p *LaunchPlan) SetStream(stream Stream) error {
	return p.use(func(raw *C.tri_launch_plan) error {
		return call(func() C.tri_result { return C.tri_go_plan_set_stream(raw, C.uintptr_t(stream)) })
	})
}

// Launch launches as LaunchOn would with the plan's kernel, grid, stream and arguments.
func (p *LaunchPlan) Launch() error {
	return p.use(func(raw *C.tri_launch_plan) error {
		h := C.uintptr_t(uintptr(unsafe.Pointer(raw))) // an integer: no allocation (see cgo.go)
		return call(func() C.tri_result { return C.tri_go_plan_launch(h) })
	})
}

// Close releases the plan; later calls return ErrInvalidArgument. Idempotent.
func (p *LaunchPlan) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.raw == nil {
		return nil
	}
	C.tri_launch_plan_destroy(p.raw)
	p.raw = nil
	runtime.SetFinalizer(p, nil)
	p.kernel.ctx.unref()
	return nil
}
