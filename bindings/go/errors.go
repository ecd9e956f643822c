// Errors: every failing C call becomes an *Error with the result code and the message the
// library kept for the calling goroutine's thread; the package's own checks (a launch argument
// that does not match the kernel, a closed object) use the same codes. errors.Is matches an
// *Error against the Err* values by code.

package tri

/*
#include <tri/tri.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Code is a C API result code (TRI_ERROR_*).
type Code int32

const (
	CodeInvalidArgument    Code = C.TRI_ERROR_INVALID_ARGUMENT
	CodeParse              Code = C.TRI_ERROR_PARSE
	CodeVerify             Code = C.TRI_ERROR_VERIFY
	CodeCorruptBinary      Code = C.TRI_ERROR_CORRUPT_BINARY
	CodeUnsupportedVersion Code = C.TRI_ERROR_UNSUPPORTED_VERSION
	CodeNotFound           Code = C.TRI_ERROR_NOT_FOUND
	CodeLimitExceeded      Code = C.TRI_ERROR_LIMIT_EXCEEDED
	CodeOutOfMemory        Code = C.TRI_ERROR_OUT_OF_MEMORY
	CodeSpecialize         Code = C.TRI_ERROR_SPECIALIZE
	CodeLaunchArgs         Code = C.TRI_ERROR_LAUNCH_ARGS
	CodeUnsupported        Code = C.TRI_ERROR_UNSUPPORTED
	CodeCompile            Code = C.TRI_ERROR_COMPILE
	CodeRuntime            Code = C.TRI_ERROR_RUNTIME
	CodeIO                 Code = C.TRI_ERROR_IO
	CodeInternal           Code = C.TRI_ERROR_INTERNAL
	CodeCancelled          Code = C.TRI_ERROR_CANCELLED
)

// String is the code's name, as tri_result_name gives it ("TRI_ERROR_PARSE").
func (c Code) String() string {
	return C.GoString(C.tri_result_name(C.tri_result(c)))
}

// Error is a failed Tri call: its result code and its message, which names the place.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	return e.Code.String() + ": " + e.Message
}

// Is makes errors.Is(err, tri.ErrParse) true for every error of that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// Values for errors.Is, one per code.
var (
	ErrInvalidArgument    = &Error{Code: CodeInvalidArgument}
	ErrParse              = &Error{Code: CodeParse}
	ErrVerify             = &Error{Code: CodeVerify}
	ErrCorruptBinary      = &Error{Code: CodeCorruptBinary}
	ErrUnsupportedVersion = &Error{Code: CodeUnsupportedVersion}
	ErrNotFound           = &Error{Code: CodeNotFound}
	ErrLimitExceeded      = &Error{Code: CodeLimitExceeded}
	ErrOutOfMemory        = &Error{Code: CodeOutOfMemory}
	ErrSpecialize         = &Error{Code: CodeSpecialize}
	ErrLaunchArgs         = &Error{Code: CodeLaunchArgs}
	ErrUnsupported        = &Error{Code: CodeUnsupported}
	ErrCompile            = &Error{Code: CodeCompile}
	ErrRuntime            = &Error{Code: CodeRuntime}
	ErrIO                 = &Error{Code: CodeIO}
	ErrInternal           = &Error{Code: CodeInternal}
	ErrCancelled          = &Error{Code: CodeCancelled}
)

func errorf(code Code, format string, args ...interface{}) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// LastErrorMessage is the calling thread's last error message ("" when none failed). Go
// moves goroutines between threads, so it is only meaningful inside runtime.LockOSThread; the
// package reads it that way after every failed call and puts it in the returned *Error.
func LastErrorMessage() string {
	size := C.tri_last_error_message(nil, 0)
	buf := make([]byte, size)
	C.tri_last_error_message((*C.char)(unsafe.Pointer(&buf[0])), size)
	return string(buf[:size-1])
}

// call runs one C call and turns its result into an error, reading the message on the same
// OS thread the call ran on (the library keeps it per thread).
func call(f func() C.tri_result) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := f()
	if r == C.TRI_OK {
		return nil
	}
	return &Error{Code: Code(r), Message: LastErrorMessage()}
}

// Version is the running library's version as major, minor, patch.
func Version() (major, minor, patch int) {
	v := int(C.tri_version())
	return v / 10000, v / 100 % 100, v % 100
}

// HeaderVersion is the version of tri.h this package was compiled against.
const HeaderVersion = C.TRI_VERSION_NUMBER
