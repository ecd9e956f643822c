// Modules (verified IR) and reflection of their kernels' signatures, which launches use to
// check their arguments before the C call.

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
*/
import "C"

import (
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// DType is an element type (TRI_DTYPE_*).
type DType int32

const (
	I1     DType = C.TRI_DTYPE_I1
	I8     DType = C.TRI_DTYPE_I8
	I16    DType = C.TRI_DTYPE_I16
	I32    DType = C.TRI_DTYPE_I32
	I64    DType = C.TRI_DTYPE_I64
	F16    DType = C.TRI_DTYPE_F16
	BF16   DType = C.TRI_DTYPE_BF16
	F32    DType = C.TRI_DTYPE_F32
	F64    DType = C.TRI_DTYPE_F64
	F8E4M3 DType = C.TRI_DTYPE_F8E4M3
	F8E5M2 DType = C.TRI_DTYPE_F8E5M2
)

var dtypeNames = map[DType]string{I1: "i1", I8: "i8", I16: "i16", I32: "i32", I64: "i64", F16: "f16", BF16: "bf16",
	F32: "f32", F64: "f64", F8E4M3: "f8e4m3", F8E5M2: "f8e5m2"}

// String is the IR spelling ("f32").
func (d DType) String() string {
	if n, ok := dtypeNames[d]; ok {
		return n
	}
	return "dtype?"
}

// IsFloat reports whether values of the type are floating point.
func (d DType) IsFloat() bool { return d >= F16 }

// TypeKind says whether a parameter is a scalar, a pointer or a block (TRI_TYPE_*).
type TypeKind int32

const (
	Scalar  TypeKind = C.TRI_TYPE_SCALAR
	Pointer TypeKind = C.TRI_TYPE_POINTER
	Block   TypeKind = C.TRI_TYPE_BLOCK
)

// Param is one parameter of a function, as reflection reports it.
type Param struct {
	Name      string
	Constexpr bool // a compile-time value rather than a launch argument
	Kind      TypeKind
	DType     DType  // the scalar's type, a pointer's pointee, a block's element
	TypeText  string // "ptr<f32>"
	Align     uint32
	Divisible uint32
	NoAlias   bool
	Default   *string // a constexpr's default as IR text, or nil
}

// Function is a kernel or device function with its parameters (runtime ones first).
type Function struct {
	Index  uint32
	Name   string
	Device bool
	Params []Param
}

// RuntimeParams are the parameters a launch passes.
func (f *Function) RuntimeParams() []Param {
	var out []Param
	for _, p := range f.Params {
		if !p.Constexpr {
			out = append(out, p)
		}
	}
	return out
}

// Module is verified IR; safe for concurrent use.
type Module struct {
	mu  sync.RWMutex
	raw *C.tri_module
	ctx *Context
}

// NewModule reads IR text or binary IR; name labels the input in messages ("softmax.tri").
func (c *Context) NewModule(data []byte, name string) (*Module, error) {
	if len(data) == 0 {
		return nil, errorf(CodeInvalidArgument, "%s: the IR is empty (give the text or binary IR of a module)", name)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	m := &Module{ctx: c}
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			return C.tri_module_create(raw, unsafe.Pointer(&data[0]), C.size_t(len(data)), cname, &m.raw)
		})
	})
	if err != nil {
		return nil, err
	}
	c.ref()
	runtime.SetFinalizer(m, (*Module).Close)
	return m, nil
}

// LoadModule reads a module from a file of IR text or binary IR.
func (c *Context) LoadModule(path string) (*Module, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf(CodeIO, "cannot read %s: %v", path, err)
	}
	return c.NewModule(data, path)
}

// Close releases the module; kernels compiled from it keep working. Idempotent.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.raw == nil {
		return nil
	}
	C.tri_module_destroy(m.raw)
	m.raw = nil
	runtime.SetFinalizer(m, nil)
	m.ctx.unref()
	return nil
}

func (m *Module) use(f func(*C.tri_module) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.raw == nil {
		return errorf(CodeInvalidArgument, "the module is closed (Close was called); load it again")
	}
	return f(m.raw)
}

func blobBytes(b *C.tri_blob) []byte {
	defer C.tri_blob_destroy(b)
	n := C.tri_blob_size(b)
	if n == 0 {
		return []byte{}
	}
	return C.GoBytes(C.tri_blob_data(b), C.int(n))
}

// Text is the module as canonical IR text (without comments: a function of the module alone).
func (m *Module) Text() (string, error) {
	var b *C.tri_blob
	err := m.use(func(raw *C.tri_module) error {
		return call(func() C.tri_result { return C.tri_module_to_text(raw, &b) })
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(b)), nil
}

// TextWithComments is what `tri fmt` writes: the canonical text with the `//` comments of the text
// the module was read from, each where it was (the same as Text for binary IR).
func (m *Module) TextWithComments() (string, error) {
	var b *C.tri_blob
	err := m.use(func(raw *C.tri_module) error {
		return call(func() C.tri_result { return C.tri_module_to_text_with_comments(raw, &b) })
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(b)), nil
}

// Binary is the module as binary IR (docs/format.md).
func (m *Module) Binary() ([]byte, error) {
	var b *C.tri_blob
	err := m.use(func(raw *C.tri_module) error {
		return call(func() C.tri_result { return C.tri_module_to_binary(raw, &b) })
	})
	if err != nil {
		return nil, err
	}
	return blobBytes(b), nil
}

// Functions lists the kernels and device functions in module order.
func (m *Module) Functions() ([]Function, error) {
	var out []Function
	err := m.use(func(raw *C.tri_module) error {
		var n C.uint32_t
		if err := call(func() C.tri_result { return C.tri_module_function_count(raw, &n) }); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			f, err := function(raw, i)
			if err != nil {
				return err
			}
			out = append(out, f)
		}
		return nil
	})
	return out, err
}

// Function is the function called name (without '@'); ErrNotFound when there is none.
func (m *Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f Function
	err := m.use(func(raw *C.tri_module) error {
		var index C.uint32_t
		if err := call(func() C.tri_result { return C.tri_module_find_function(raw, cname, &index) }); err != nil {
			return err
		}
		var err error
		f, err = function(raw, index)
		return err
	})
	return f, err
}

func function(m *C.tri_module, i C.uint32_t) (Function, error) {
	var name *C.char
	var kind C.int32_t
	var count C.uint32_t
	err := call(func() C.tri_result {
		if r := C.tri_module_function_name(m, i, &name); r != C.TRI_OK {
			return r
		}
		if r := C.tri_module_function_kind(m, i, &kind); r != C.TRI_OK {
			return r
		}
		return C.tri_module_param_count(m, i, &count)
	})
	if err != nil {
		return Function{}, err
	}
	f := Function{Index: uint32(i), Name: C.GoString(name), Device: kind == C.TRI_FUNCTION_DEVICE}
	for p := C.uint32_t(0); p < count; p++ {
		var pname, text, def *C.char
		var pkind, tkind, dtype, noalias C.int32_t
		var align, divisible C.uint32_t
		err := call(func() C.tri_result {
			if r := C.tri_module_param_name(m, i, p, &pname); r != C.TRI_OK {
				return r
			}
			if r := C.tri_module_param_kind(m, i, p, &pkind); r != C.TRI_OK {
				return r
			}
			if r := C.tri_module_param_type(m, i, p, &tkind, &dtype, &text); r != C.TRI_OK {
				return r
			}
			if r := C.tri_module_param_facts(m, i, p, &align, &divisible, &noalias); r != C.TRI_OK {
				return r
			}
			if pkind == C.TRI_PARAM_CONSTEXPR {
				return C.tri_module_param_default(m, i, p, &def)
			}
			return C.TRI_OK
		})
		if err != nil {
			return Function{}, err
		}
		param := Param{Name: C.GoString(pname), Constexpr: pkind == C.TRI_PARAM_CONSTEXPR, Kind: TypeKind(tkind),
			DType: DType(dtype), TypeText: C.GoString(text), Align: uint32(align), Divisible: uint32(divisible),
			NoAlias: noalias != 0}
		if def != nil {
			s := C.GoString(def)
			param.Default = &s
		}
		f.Params = append(f.Params, param)
	}
	return f, nil
}
