// Packages (docs/aot.md): modules loaded from a file `tri aot` made, whose kernels come with
// their code for this machine and launch without compiling, through libtri or libtri_rt (the
// build tag tri_rt links the latter; README.md, "Packages and libtri_rt").

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
*/
import "C"

import (
	"os"
	"runtime"
	"unsafe"
)

// LoadPackage reads a package made by `tri aot` from its bytes (copied); name labels it in
// messages. Nothing is compiled: Module.Kernel gives the package's kernels. Errors:
// CodeCorruptBinary for damaged bytes.
func (c *Context) LoadPackage(data []byte, name string) (*Module, error) {
	if len(data) == 0 {
		return nil, errorf(CodeCorruptBinary, "%s: the package is empty", name)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	m := &Module{ctx: c}
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			return C.tri_module_load_package(raw, unsafe.Pointer(&data[0]), C.size_t(len(data)), cname, &m.raw)
		})
	})
	if err != nil {
		return nil, err
	}
	c.ref()
	runtime.SetFinalizer(m, (*Module).Close)
	return m, nil
}

// LoadPackageFile reads the package in the file at path (see LoadPackage).
func (c *Context) LoadPackageFile(path string) (*Module, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf(CodeIO, "cannot read %s: %v", path, err)
	}
	return c.LoadPackage(data, path)
}

// Kernel gives kernel name as this module's package holds it for opts (nil: the defaults), with
// its code for this machine; it compiles nothing. CodeNotFound says what the package holds when
// nothing matches.
func (m *Module) Kernel(name string, opts *CompileOptions) (*Kernel, error) {
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
		return call(func() C.tri_result { return C.tri_module_kernel(mr, cname, copts, &raw) })
	})
	if err != nil {
		return nil, err
	}
	return m.adopt(name, opts, raw)
}

// PackageInfo is what this module's package holds, as JSON (tri_module_package_info): its
// kernels, their specializations, variants and code per machine.
func (m *Module) PackageInfo() (string, error) {
	var b *C.tri_blob
	err := m.use(func(raw *C.tri_module) error {
		return call(func() C.tri_result { return C.tri_module_package_info(raw, &b) })
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(b)), nil
}
