// The log sink's way back into Go. It lives in its own file because a file with //export may
// only declare C functions in its preamble, not define them.

package tri

/*
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// LogLevel is the level of a log message (TRI_LOG_*); lower is more severe.
type LogLevel int32

const (
	LogError   LogLevel = 0
	LogWarning LogLevel = 1
	LogInfo    LogLevel = 2
	LogDebug   LogLevel = 3
)

// LogFunc receives the library's messages; it may be called from any thread that uses the
// context, the CPU target's workers included.
type LogFunc func(level LogLevel, message string)

//export triGoLog
func triGoLog(user unsafe.Pointer, level C.int32_t, message *C.char) {
	// A panic must not unwind into C: a sink that panics loses that one message.
	defer func() { _ = recover() }()
	fn := cgo.Handle(uintptr(user)).Value().(LogFunc)
	fn(LogLevel(level), C.GoString(message))
}
