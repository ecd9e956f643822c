// Contexts: the root of modules and kernels. Each Go object guards its handle with a RWMutex:
// calls hold it shared, Close takes it exclusively, so Close waits for calls in flight and a
// closed object answers ErrInvalidArgument instead of touching freed memory. Finalizers close
// what the program forgot to.

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
tri_result tri_go_set_log(tri_context_options* options, uintptr_t handle, int32_t max_level);
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Context is a Tri context; safe for concurrent use.
type Context struct {
	mu     sync.RWMutex
	raw    *C.tri_context
	log    cgo.Handle
	hasLog bool
	// refs counts this Context and every live Module and Kernel made from it: the log sink's
	// handle is released only when no C object that could call it is left.
	refs int32
}

// ContextOption configures NewContext.
type ContextOption func(*contextConfig)

type contextConfig struct {
	log                 LogFunc
	level               LogLevel
	cacheDir            *string
	cacheMaxBytes       *uint64
	interpMemoryLimit   *uint64
	kernelCacheCapacity *uint32
}

// WithLog sends the library's messages up to maxLevel to fn.
func WithLog(maxLevel LogLevel, fn LogFunc) ContextOption {
	return func(c *contextConfig) { c.log, c.level = fn, maxLevel }
}

// WithCacheDir sets the directory of the disk cache of compiled kernels (made when missing); ""
// turns the disk cache off. Without it: $TRI_CACHE_DIR, else $XDG_CACHE_HOME/tri, else
// ~/.cache/tri.
func WithCacheDir(dir string) ContextOption {
	return func(c *contextConfig) { c.cacheDir = &dir }
}

// WithCacheMaxBytes bounds the disk cache (default 1 GiB; 0: no bound); least recently used
// entries go first.
func WithCacheMaxBytes(bytes uint64) ContextOption {
	return func(c *contextConfig) { c.cacheMaxBytes = &bytes }
}

// WithInterpMemoryLimit sets the "interp" target's working-memory budget per launch in bytes
// (0, the default: none); a launch that would need more fails before running with
// ErrLimitExceeded.
func WithInterpMemoryLimit(bytes uint64) ContextOption {
	return func(c *contextConfig) { c.interpMemoryLimit = &bytes }
}

// WithKernelCacheCapacity sets how many compiled specializations each module keeps in memory for
// later compiles to find (default 64; 0 keeps none that no Kernel holds).
func WithKernelCacheCapacity(count uint32) ContextOption {
	return func(c *contextConfig) { c.kernelCacheCapacity = &count }
}

// NewContext makes a context.
func NewContext(options ...ContextOption) (*Context, error) {
	var cfg contextConfig
	for _, o := range options {
		o(&cfg)
	}
	var opts *C.tri_context_options
	if err := call(func() C.tri_result { return C.tri_context_options_create(&opts) }); err != nil {
		return nil, err
	}
	defer C.tri_context_options_destroy(opts)
	c := &Context{refs: 1}
	if cfg.log != nil {
		c.log, c.hasLog = cgo.NewHandle(cfg.log), true
		err := call(func() C.tri_result {
			return C.tri_go_set_log(opts, C.uintptr_t(c.log), C.int32_t(cfg.level))
		})
		if err != nil {
			c.log.Delete()
			return nil, err
		}
	}
	if cfg.cacheDir != nil {
		dir := C.CString(*cfg.cacheDir)
		defer C.free(unsafe.Pointer(dir))
		if err := call(func() C.tri_result { return C.tri_context_options_set_cache_dir(opts, dir) }); err != nil {
			c.unref()
			return nil, err
		}
	}
	var setters []func() C.tri_result
	if v := cfg.cacheMaxBytes; v != nil {
		setters = append(setters, func() C.tri_result {
			return C.tri_context_options_set_cache_max_bytes(opts, C.uint64_t(*v))
		})
	}
	if v := cfg.interpMemoryLimit; v != nil {
		setters = append(setters, func() C.tri_result {
			return C.tri_context_options_set_interp_memory_limit(opts, C.uint64_t(*v))
		})
	}
	if v := cfg.kernelCacheCapacity; v != nil {
		setters = append(setters, func() C.tri_result {
			return C.tri_context_options_set_kernel_cache_capacity(opts, C.uint32_t(*v))
		})
	}
	for _, set := range setters {
		if err := call(set); err != nil {
			c.unref()
			return nil, err
		}
	}
	err := call(func() C.tri_result { return C.tri_context_create(opts, C.TRI_VERSION_NUMBER, &c.raw) })
	if err != nil {
		c.unref()
		return nil, err
	}
	runtime.SetFinalizer(c, (*Context).Close)
	return c, nil
}

func (c *Context) ref() { atomic.AddInt32(&c.refs, 1) }

func (c *Context) unref() {
	if atomic.AddInt32(&c.refs, -1) == 0 && c.hasLog {
		c.log.Delete()
	}
}

// Close releases the context; modules and kernels made from it keep working. Later calls on
// it return ErrInvalidArgument. Close is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw == nil {
		return nil
	}
	C.tri_context_destroy(c.raw)
	c.raw = nil
	runtime.SetFinalizer(c, nil)
	c.unref()
	return nil
}

// Cancel stops every launch of this context on a host target ("cpu", "interp") running now: each
// returns ErrCancelled (the stores it made stay made). Launches that begin later run normally;
// GPU launches are not stopped. Safe to call from any goroutine and from the log sink.
func (c *Context) Cancel() error {
	return c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_context_cancel(raw) })
	})
}

// use runs f with the live handle, or fails when the context is closed.
func (c *Context) use(f func(*C.tri_context) error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.raw == nil {
		return errorf(CodeInvalidArgument, "the context is closed (Close was called); make a new one")
	}
	return f(c.raw)
}
