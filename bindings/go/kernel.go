// Compiling kernels and launching them. Launch arguments are Go values checked against the
// kernel's reflected signature before the C call: slices (or Buffers, or HostMemory) for the
// pointers of host kernels, DevicePtrs for those of "cuda" kernels, numbers for scalars.

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
tri_result tri_go_launch(uintptr_t kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                         uintptr_t args, uint32_t n, uintptr_t slots, uint32_t nbuf,
                         void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                         void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14, void* b15);
tri_result tri_go_launch_c(uintptr_t kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                           uintptr_t args, uint32_t n);
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// CompileOptions say how to compile a kernel. The zero value compiles for the CPU with the
// constexprs' defaults. A plain value: each Compile makes its own C options object, so one
// CompileOptions may be shared between goroutines.
type CompileOptions struct {
	Target  string // "cpu" (default), "interp" or "cuda"
	Checked bool   // bounds and undefined-lane checks (target "interp" only)
	// Constexpr values by name: integers (any Go integer type), floats, or bools.
	Constexprs map[string]interface{}
	// Promises about runtime parameter i (0-based among runtime parameters).
	ArgAlign     map[int]uint32
	ArgDivisible map[int]uint32
	// NumWarps is the warps per program of GPU targets: 1, 2, 4, 8, 16 or 32 (0: the default, 4).
	NumWarps int
	// NumStages is how many iterations ahead a loop that feeds dot loads its operands (0: the
	// target's default; 1 to 4). The results do not change.
	NumStages int
	// Arch is the GPU architecture ("sm_80", "sm_90", "sm_90a"); "" means the current device's,
	// which needs a driver. Named, PTX is made on any machine.
	Arch string
	// LaunchSpecialization switches launch-time specialization (nil: the target's default, on
	// for "cuda" and off for "cpu").
	LaunchSpecialization *Specialization
	// ArgSpecialization takes runtime parameter i (below 32) out of launch-time specialization
	// (false) or puts it back (true, the default).
	ArgSpecialization map[int]bool
}

// Specialization is launch-time specialization's setting: each launch classes its arguments
// (pointers aligned to 16, integers divisible by 16) and runs a variant compiled for those
// classes, at most MaxVariants (16 at most; 0 means the default, 8) of them. Off, the launch
// path never compiles.
type Specialization struct {
	On          bool
	MaxVariants uint32
}

func (o *CompileOptions) build() (*C.tri_compile_options, error) {
	var opts *C.tri_compile_options
	if err := call(func() C.tri_result { return C.tri_compile_options_create(&opts) }); err != nil {
		return nil, err
	}
	err := o.apply(opts)
	if err != nil {
		C.tri_compile_options_destroy(opts)
		return nil, err
	}
	return opts, nil
}

func (o *CompileOptions) apply(opts *C.tri_compile_options) error {
	if o.Target != "" {
		t := C.CString(o.Target)
		defer C.free(unsafe.Pointer(t))
		if err := call(func() C.tri_result { return C.tri_compile_options_set_target(opts, t) }); err != nil {
			return err
		}
	}
	checked := C.int32_t(0)
	if o.Checked {
		checked = 1
	}
	if err := call(func() C.tri_result { return C.tri_compile_options_set_checked(opts, checked) }); err != nil {
		return err
	}
	names := make([]string, 0, len(o.Constexprs))
	for n := range o.Constexprs {
		names = append(names, n)
	}
	sort.Strings(names) // the first error is the same on every run
	for _, n := range names {
		cn := C.CString(n)
		defer C.free(unsafe.Pointer(cn))
		var err error
		switch v := o.Constexprs[n].(type) {
		case int, int8, int16, int32, int64, uint8, uint16, uint32:
			i := toInt64(v)
			err = call(func() C.tri_result { return C.tri_compile_options_set_constexpr_int(opts, cn, C.int64_t(i)) })
		case bool:
			i := int64(0)
			if v {
				i = 1
			}
			err = call(func() C.tri_result { return C.tri_compile_options_set_constexpr_int(opts, cn, C.int64_t(i)) })
		case float32, float64:
			f := toFloat64(v)
			err = call(func() C.tri_result { return C.tri_compile_options_set_constexpr_float(opts, cn, C.double(f)) })
		default:
			err = errorf(CodeInvalidArgument, "constexpr '%s' is a %T; give an integer, a float or a bool", n, v)
		}
		if err != nil {
			return err
		}
	}
	for p, a := range o.ArgAlign {
		p, a := p, a
		if err := call(func() C.tri_result { return C.tri_compile_options_set_arg_align(opts, C.uint32_t(p), C.uint32_t(a)) }); err != nil {
			return err
		}
	}
	for p, d := range o.ArgDivisible {
		p, d := p, d
		if err := call(func() C.tri_result {
			return C.tri_compile_options_set_arg_divisible(opts, C.uint32_t(p), C.uint32_t(d))
		}); err != nil {
			return err
		}
	}
	if o.NumWarps != 0 {
		if err := call(func() C.tri_result { return C.tri_compile_options_set_num_warps(opts, C.int32_t(o.NumWarps)) }); err != nil {
			return err
		}
	}
	if o.NumStages != 0 {
		if err := call(func() C.tri_result { return C.tri_compile_options_set_num_stages(opts, C.int32_t(o.NumStages)) }); err != nil {
			return err
		}
	}
	if o.Arch != "" {
		a := C.CString(o.Arch)
		defer C.free(unsafe.Pointer(a))
		if err := call(func() C.tri_result { return C.tri_compile_options_set_arch(opts, a) }); err != nil {
			return err
		}
	}
	if s := o.LaunchSpecialization; s != nil {
		on, max := C.int32_t(0), C.uint32_t(s.MaxVariants)
		if s.On {
			on = 1
		}
		if max == 0 {
			max = 8
		}
		if err := call(func() C.tri_result { return C.tri_compile_options_set_launch_specialization(opts, on, max) }); err != nil {
			return err
		}
	}
	params := make([]int, 0, len(o.ArgSpecialization))
	for p := range o.ArgSpecialization {
		params = append(params, p)
	}
	sort.Ints(params)
	for _, p := range params {
		on := C.int32_t(0)
		if o.ArgSpecialization[p] {
			on = 1
		}
		if err := call(func() C.tri_result {
			return C.tri_compile_options_set_arg_specialization(opts, C.uint32_t(p), on)
		}); err != nil {
			return err
		}
	}
	return nil
}

func toInt64(v interface{}) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	}
	return 0
}

func toFloat64(v interface{}) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// Kernel is a compiled kernel; safe for concurrent launches. It keeps its module and context
// alive, so it may outlive the Module it came from.
type Kernel struct {
	mu     sync.RWMutex
	raw    *C.tri_kernel
	ctx    *Context
	name   string
	target string
	params []Param
	aligns map[int]uint32 // CompileOptions.ArgAlign: launches check them as {align=N} facts
}

// Compile compiles kernel name; opts nil means the defaults.
func (m *Module) Compile(name string, opts *CompileOptions) (*Kernel, error) {
	if opts == nil {
		opts = &CompileOptions{}
	}
	copts, err := opts.build()
	if err != nil {
		return nil, err
	}
	defer C.tri_compile_options_destroy(copts)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var raw *C.tri_kernel
	err = m.use(func(mr *C.tri_module) error {
		return call(func() C.tri_result { return C.tri_kernel_compile(mr, cname, copts, &raw) })
	})
	if err != nil {
		return nil, err
	}
	return m.adopt(name, opts, raw)
}

// adopt makes a Kernel of raw, kernel name compiled by the library with opts (target "": "cpu")
// from this module (tri_kernel_compile, tri_tune); raw is released on every path, errors
// included.
func (m *Module) adopt(name string, opts *CompileOptions, raw *C.tri_kernel) (*Kernel, error) {
	k := &Kernel{ctx: m.ctx, name: name, target: opts.Target, raw: raw, aligns: opts.ArgAlign}
	if k.target == "" {
		k.target = "cpu"
	}
	m.ctx.ref()
	runtime.SetFinalizer(k, (*Kernel).Close)
	f, err := m.Function(name)
	if err != nil {
		k.Close()
		return nil, err
	}
	k.params = f.RuntimeParams()
	var count C.uint32_t
	if err := call(func() C.tri_result { return C.tri_kernel_arg_count(k.raw, &count) }); err != nil {
		k.Close()
		return nil, err
	}
	if int(count) != len(k.params) {
		k.Close()
		return nil, errorf(CodeInternal, "kernel @%s reflects %d runtime parameters but takes %d arguments", name,
			len(k.params), count)
	}
	return k, nil
}

// Close releases the kernel; later launches return ErrInvalidArgument. Idempotent.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.raw == nil {
		return nil
	}
	C.tri_kernel_destroy(k.raw)
	k.raw = nil
	runtime.SetFinalizer(k, nil)
	k.ctx.unref()
	return nil
}

// Name is the kernel's name (without '@').
func (k *Kernel) Name() string { return k.name }

// Target is the target the kernel was compiled for ("cpu", "interp", "cuda").
func (k *Kernel) Target() string { return k.target }

// Params are the runtime parameters a launch passes, in order.
func (k *Kernel) Params() []Param { return append([]Param(nil), k.params...) }

func (k *Kernel) use(f func(*C.tri_kernel) error) error {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.raw == nil {
		return errorf(CodeInvalidArgument, "kernel @%s is closed (Close was called); compile it again", k.name)
	}
	return f(k.raw)
}

// Text is the specialized IR the kernel was compiled from.
func (k *Kernel) Text() (string, error) {
	var b *C.tri_blob
	err := k.use(func(raw *C.tri_kernel) error {
		return call(func() C.tri_result { return C.tri_kernel_to_text(raw, &b) })
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(b)), nil
}

// Code is what the target made, by kind: "llvm" (LLVM IR after optimization) for "cpu" and
// "cuda"; "asm" (the host assembly) for "cpu"; "ptx" (the PTX module), "metadata" (the launch
// descriptor, JSON) and "cubin" (the driver's machine code, binary, with a GPU) for "cuda".
// Stages a compile does not keep are made on the first call. ErrNotFound when the target makes
// nothing of that kind (the message lists what it makes).
func (k *Kernel) Code(kind string) (string, error) {
	ckind := C.CString(kind)
	defer C.free(unsafe.Pointer(ckind))
	var b *C.tri_blob
	err := k.use(func(raw *C.tri_kernel) error {
		return call(func() C.tri_result { return C.tri_kernel_code(raw, ckind, &b) })
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(b)), nil
}

// Variants is what launch-time specialization has made for a kernel (docs/capi.md, "Variants").
type Variants struct {
	Schema      int       `json:"schema"`
	MaxVariants int       `json:"max_variants"`
	Variants    []Variant `json:"variants"`
}

// Variant is one variant: its key (two bits per parameter), the classes it was compiled for and
// why it was made ("argument 3 (%n) changed class: not divisible by 16 -> divisible by 16 ...").
type Variant struct {
	Key     string `json:"key"`
	Classes []struct {
		Param int    `json:"param"`
		Name  string `json:"name"`
		Class string `json:"class"`
	} `json:"classes"`
	Reason string `json:"reason"`
}

// Variants lists the variants launch-time specialization has made so far.
func (k *Kernel) Variants() (Variants, error) {
	var b *C.tri_blob
	err := k.use(func(raw *C.tri_kernel) error {
		return call(func() C.tri_result { return C.tri_kernel_variants(raw, &b) })
	})
	if err != nil {
		return Variants{}, err
	}
	var v Variants
	if err := json.Unmarshal(blobBytes(b), &v); err != nil {
		return Variants{}, errorf(CodeInternal, "tri_kernel_variants gave JSON this package cannot read: %v", err)
	}
	return v, nil
}

// Grid is the number of program instances along x, y and z (x below 2^31, y and z below 2^16;
// a zero in any launches nothing).
type Grid struct{ X, Y, Z uint32 }

// Grid1 is a one-dimensional grid of n program instances.
func Grid1(n int) Grid { return Grid{uint32(n), 1, 1} }

// Buffer is host memory a slice does not describe (bf16, f8, memory from C): its address, its
// size in bytes (0: unknown) and its element type. The caller keeps it alive across the launch;
// in a LaunchPlan it must be C memory, never Go memory.
type Buffer struct {
	Ptr   unsafe.Pointer
	Bytes uint64
	DType DType
}

// sliceData is the address of a slice's first element, nil for an empty slice.
func sliceData[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// sliceBuffer is the element type and memory of a slice argument.
func sliceBuffer(v interface{}) (DType, unsafe.Pointer, uint64, bool) {
	switch s := v.(type) {
	case []float32:
		return F32, sliceData(s), uint64(len(s)) * 4, true
	case []float64:
		return F64, sliceData(s), uint64(len(s)) * 8, true
	case []int8:
		return I8, sliceData(s), uint64(len(s)), true
	case []uint8:
		return I8, sliceData(s), uint64(len(s)), true
	case []int16:
		return I16, sliceData(s), uint64(len(s)) * 2, true
	case []uint16:
		return I16, sliceData(s), uint64(len(s)) * 2, true
	case []int32:
		return I32, sliceData(s), uint64(len(s)) * 4, true
	case []uint32:
		return I32, sliceData(s), uint64(len(s)) * 4, true
	case []int64:
		return I64, sliceData(s), uint64(len(s)) * 8, true
	case []uint64:
		return I64, sliceData(s), uint64(len(s)) * 8, true
	}
	return 0, nil, 0, false
}

func describe(v interface{}) string {
	switch b := v.(type) {
	case Buffer:
		return "a Buffer of " + b.DType.String()
	case *HostMemory:
		return "a HostMemory of " + b.dtype.String()
	case DevicePtr:
		return "a DevicePtr of " + b.DType.String()
	}
	return fmt.Sprintf("a %T", v)
}

func intRange(d DType) (int64, int64) {
	switch d {
	case I1:
		return 0, 1
	case I8:
		return math.MinInt8, math.MaxUint8
	case I16:
		return math.MinInt16, math.MaxUint16
	case I32:
		return math.MinInt32, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}

// onDevice reports whether the kernel takes device memory; ErrUnsupported for a target this
// package does not know.
func (k *Kernel) onDevice() (bool, error) {
	switch k.target {
	case "cpu", "interp":
		return false, nil
	case "cuda":
		return true, nil
	}
	return false, errorf(CodeUnsupported, "kernel @%s was compiled for target %q; this package launches \"cpu\" and "+
		"\"interp\" kernels (host memory) and \"cuda\" ones (device memory)", k.name, k.target)
}

// encodedArg is one argument as the C API takes it. goPtr is Go memory that may reach C only as
// a direct call argument (Launch's slots); keep is what must stay reachable while C uses it.
type encodedArg struct {
	raw   C.tri_arg
	goPtr unsafe.Pointer
	keep  interface{}
}

func setPointer(a *C.tri_arg, p uint64) { *(*C.uint64_t)(unsafe.Pointer(&a.value[0])) = C.uint64_t(p) }

// encode checks argument i against its parameter and encodes it. forPlan refuses Go memory,
// which a plan would keep in C memory against the cgo rules.
func (k *Kernel) encode(i int, v interface{}, forPlan bool) (encodedArg, error) {
	var e encodedArg
	if i < 0 || i >= len(k.params) {
		return e, errorf(CodeLaunchArgs, "kernel @%s takes %d arguments; there is no argument %d", k.name, len(k.params), i)
	}
	device, err := k.onDevice()
	if err != nil {
		return e, err
	}
	p := k.params[i]
	// The messages are made only when an argument is refused: a launch that goes through
	// formats nothing and allocates nothing here.
	where := func() string {
		return fmt.Sprintf("argument %d (%%%s) of kernel @%s is %s", i, p.Name, k.name, p.TypeText)
	}
	a := &e.raw
	a.dtype = C.int32_t(p.DType)
	switch p.Kind {
	case Pointer:
		a.kind = C.TRI_TYPE_POINTER
		refuse := func() (encodedArg, error) {
			takes := "a slice of " + p.DType.String() + " (or a Buffer or HostMemory)"
			if device {
				takes = "a DevicePtr of " + p.DType.String() + " (the kernel runs on the GPU)"
			} else if forPlan {
				takes = "a HostMemory or Buffer of " + p.DType.String() + " (a plan keeps its pointers in C memory, " +
					"where cgo forbids Go memory: a slice can only be passed to Launch)"
			}
			return e, errorf(CodeLaunchArgs, "%s, so it takes %s, but %s was given", where(), takes, describe(v))
		}
		switch b := v.(type) {
		case DevicePtr:
			if !device || b.DType != p.DType {
				return refuse()
			}
			setPointer(a, b.Ptr)
			a.extent = C.uint64_t(b.Bytes)
		case *HostMemory:
			if device || b == nil || b.dtype != p.DType {
				return refuse()
			}
			ptr, bytes := b.raw()
			setPointer(a, uint64(ptr))
			a.extent = C.uint64_t(bytes)
			e.keep = b
		case Buffer:
			if device || b.DType != p.DType {
				return refuse()
			}
			a.extent = C.uint64_t(b.Bytes)
			if forPlan {
				setPointer(a, uint64(uintptr(b.Ptr))) // C memory, as Buffer's contract says for plans
			} else {
				e.goPtr = b.Ptr // may be Go memory: a direct call argument only
			}
		default:
			d, ptr, bytes, ok := sliceBuffer(v)
			if !ok || device || forPlan || d != p.DType {
				return refuse()
			}
			a.extent = C.uint64_t(bytes)
			e.goPtr, e.keep = ptr, v
		}
		// Every target would read a misaligned pointer wrong or fault on it; the address is here.
		address := uint64(uintptr(e.goPtr))
		if e.goPtr == nil {
			address = uint64(*(*C.uint64_t)(unsafe.Pointer(&a.value[0])))
		}
		align := p.Align
		if promised := k.aligns[i]; promised > align {
			align = promised
		}
		if align > 1 && address%uint64(align) != 0 {
			return e, errorf(CodeLaunchArgs, "%s with {align=%d}, but the address given, %#x, is not a multiple of %d: "+
				"pass memory that starts on a %d-byte boundary (a subslice moves the start; copy it), or compile "+
				"without that fact", where(), align, address, align, align)
		}
	case Scalar:
		a.kind = C.TRI_TYPE_SCALAR
		if p.DType.IsFloat() {
			var f float64
			switch x := v.(type) {
			case float32:
				f = float64(x)
			case float64:
				f = x
			case int:
				f = float64(x)
			default:
				return e, errorf(CodeLaunchArgs, "%s, so it takes a float, but %s was given", where(), describe(x))
			}
			*(*C.double)(unsafe.Pointer(&a.value[0])) = C.double(f)
			break
		}
		var n int64
		switch x := v.(type) {
		case bool:
			if p.DType != I1 {
				return e, errorf(CodeLaunchArgs, "%s, so it takes an integer, but a bool was given", where())
			}
			if x {
				n = 1
			}
		case int, int8, int16, int32, int64, uint8, uint16, uint32:
			n = toInt64(x)
		case uint:
			if uint64(x) > math.MaxInt64 {
				return e, errorf(CodeLaunchArgs, "%s, and %d does not fit in it", where(), x)
			}
			n = int64(x)
		case uint64:
			if x > math.MaxInt64 && p.DType != I64 {
				return e, errorf(CodeLaunchArgs, "%s, and %d does not fit in it", where(), x)
			}
			n = int64(x)
		default:
			return e, errorf(CodeLaunchArgs, "%s, so it takes an integer, but %s was given", where(), describe(x))
		}
		if lo, hi := intRange(p.DType); n < lo || n > hi {
			return e, errorf(CodeLaunchArgs, "%s, and %d does not fit in it", where(), n)
		}
		*(*C.int64_t)(unsafe.Pointer(&a.value[0])) = C.int64_t(n)
	default:
		return e, errorf(CodeLaunchArgs, "%s, which a launch cannot pass", where())
	}
	return e, nil
}

func (k *Kernel) checkCount(args []interface{}) error {
	if _, err := k.onDevice(); err != nil {
		return err
	}
	if len(args) != len(k.params) {
		sig := make([]string, len(k.params))
		for i, p := range k.params {
			sig[i] = "%" + p.Name + ": " + p.TypeText
		}
		return errorf(CodeLaunchArgs, "kernel @%s takes %d arguments (%s), but %d were given", k.name, len(k.params),
			strings.Join(sig, ", "), len(args))
	}
	return nil
}

// Launch runs the kernel over grid. One argument per runtime parameter, in order. Pointers of
// host kernels ("cpu", "interp"): a slice whose element type is the pointee's (float32 for
// ptr<f32>; signed and unsigned integers alike), a Buffer or a HostMemory; of "cuda" kernels: a
// DevicePtr. Scalars: any Go integer (bool for i1) or float. Host kernels return when every
// program instance has finished, and the slices must stay untouched by other goroutines until
// then; a "cuda" kernel is queued on the default stream (see LaunchOn).
func (k *Kernel) Launch(grid Grid, args ...interface{}) error {
	return k.LaunchOn(0, grid, args...)
}

// LaunchOn is Launch on a CUDA stream: a "cuda" kernel is queued on stream (0: the default
// stream) and LaunchOn returns; errors of the kernel itself surface at the next
// synchronization. Host kernels take only stream 0.
func (k *Kernel) LaunchOn(stream Stream, grid Grid, args ...interface{}) error {
	c, err := k.encodeCall(args)
	if err != nil {
		return err
	}
	err = k.use(func(kr *C.tri_kernel) error {
		kp, ap := C.uintptr_t(uintptr(unsafe.Pointer(kr))), C.uintptr_t(uintptr(unsafe.Pointer(&c.raw[0])))
		gx, gy, gz, n := C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z), C.uint32_t(len(args))
		if c.nbuf == 0 {
			return call(func() C.tri_result { return C.tri_go_launch_c(kp, gx, gy, gz, C.uintptr_t(stream), ap, n) })
		}
		b := &c.bufs
		sp := C.uintptr_t(uintptr(unsafe.Pointer(&c.slots[0])))
		return call(func() C.tri_result {
			return C.tri_go_launch(kp, gx, gy, gz, C.uintptr_t(stream), ap, n, sp, C.uint32_t(c.nbuf), b[0], b[1], b[2],
				b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
		})
	})
	// The slices' memory must stay reachable until the C call has returned.
	runtime.KeepAlive(args)
	c.release()
	return err
}

// encodedCall is a launch's arguments as tri_go_launch and tri_go_tune take them: the tri_args,
// and the Go memory that reaches C only as direct call arguments (bufs[j] is argument slots[j]'s
// pointer). raw and slots are never empty, so &raw[0] and &slots[0] exist. encodeCall's are C
// memory (the launch passes their addresses as integers) and come from callPool when the launch
// has at most maxPooledArgs arguments, so that a launch allocates nothing; release gives them
// back. Team launches make theirs in Go memory.
type encodedCall struct {
	raw    []C.tri_arg
	slots  []C.uint32_t
	bufs   [maxBuffers]unsafe.Pointer
	nbuf   int
	cmem   unsafe.Pointer // the C memory behind raw and slots, or nil
	pooled bool
}

const maxPooledArgs = 32

// newCCall is an encodedCall whose raw (n+1 arguments) and slots are in C memory, freed by its
// finalizer (pooled ones live as long as the pool keeps them) or by release.
func newCCall(n int) *encodedCall {
	rawBytes := C.size_t(n+1) * C.size_t(unsafe.Sizeof(C.tri_arg{}))
	mem := C.calloc(1, rawBytes+C.size_t(maxBuffers+1)*C.size_t(unsafe.Sizeof(C.uint32_t(0))))
	if mem == nil {
		panic("tri: out of C memory for launch arguments")
	}
	c := &encodedCall{cmem: mem}
	c.raw = unsafe.Slice((*C.tri_arg)(mem), n+1)
	c.slots = unsafe.Slice((*C.uint32_t)(unsafe.Add(mem, rawBytes)), maxBuffers+1)[:0]
	return c
}

func freeCCall(c *encodedCall) {
	if c.cmem != nil {
		C.free(c.cmem)
		c.cmem = nil
	}
}

var callPool = sync.Pool{New: func() interface{} {
	c := newCCall(maxPooledArgs)
	c.pooled = true
	runtime.SetFinalizer(c, freeCCall)
	return c
}}

// release gives a call's C memory back (to the pool, for pooled ones), dropping its references
// to the caller's memory.
func (c *encodedCall) release() {
	if c.cmem == nil {
		return
	}
	c.bufs = [maxBuffers]unsafe.Pointer{}
	c.nbuf = 0
	if !c.pooled {
		freeCCall(c)
		return
	}
	c.raw = unsafe.Slice((*C.tri_arg)(c.cmem), maxPooledArgs+1)
	c.slots = c.slots[:0]
	callPool.Put(c)
}

// encodeCall checks the count and every argument and encodes them for a direct call.
func (k *Kernel) encodeCall(args []interface{}) (*encodedCall, error) {
	if err := k.checkCount(args); err != nil {
		return nil, err
	}
	var c *encodedCall
	if len(args) <= maxPooledArgs {
		c = callPool.Get().(*encodedCall)
		c.raw = c.raw[:len(args)+1]
	} else {
		c = newCCall(len(args))
	}
	for i, v := range args {
		e, err := k.encode(i, v, false)
		if err != nil {
			c.release()
			return nil, err
		}
		c.raw[i] = e.raw
		if e.goPtr != nil {
			if c.nbuf == maxBuffers {
				c.release()
				return nil, errorf(CodeLaunchArgs, "kernel @%s takes more than %d buffers, the most one Go launch passes",
					k.name, maxBuffers)
			}
			c.slots = append(c.slots, C.uint32_t(i))
			c.bufs[c.nbuf] = e.goPtr
			c.nbuf++
		}
	}
	c.slots = append(c.slots, 0) // never empty
	return c, nil
}
