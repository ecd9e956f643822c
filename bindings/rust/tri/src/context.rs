// Contexts and their options: the log sink and the host allocator are Rust values whose
// lifetime the crate ties to the C context's. Every object made from a context (module, kernel,
// blob) holds a clone of its `Context`, so the closures the C side calls back into are dropped
// only after the last C object that could call them is gone.

use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
#[cfg(not(feature = "runtime-only"))]
use std::path::Path;
use std::ptr;
use std::sync::Arc;

use tri_sys as sys;

use crate::error::{check, Error, Result};

/// The level of a log message (`TRI_LOG_*`); lower is more severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
}

impl LogLevel {
    fn raw(self) -> i32 {
        match self {
            LogLevel::Error => sys::TRI_LOG_ERROR,
            LogLevel::Warning => sys::TRI_LOG_WARNING,
            LogLevel::Info => sys::TRI_LOG_INFO,
            LogLevel::Debug => sys::TRI_LOG_DEBUG,
        }
    }

    fn from_raw(level: i32) -> LogLevel {
        match level {
            sys::TRI_LOG_ERROR => LogLevel::Error,
            sys::TRI_LOG_WARNING => LogLevel::Warning,
            sys::TRI_LOG_INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

type LogFn = dyn Fn(LogLevel, &str) + Send + Sync;

/// A host allocator for the memory behind Tri's handles (tri_context_options_set_allocator).
///
/// # Safety
/// `alloc` must return null or memory of at least `size` bytes aligned to `align` that stays
/// valid until `free` receives it back with the same size. Both are called from any thread that
/// uses the context.
pub unsafe trait HostAllocator: Send + Sync {
    fn alloc(&self, size: usize, align: usize) -> *mut u8;
    /// # Safety
    /// `ptr` and `size` come from an earlier `alloc` of this allocator.
    unsafe fn free(&self, ptr: *mut u8, size: usize);
}

/// Options for a context, collected in Rust and handed to the C library when `build` makes it.
#[derive(Default)]
pub struct ContextBuilder {
    log: Option<(Box<LogFn>, LogLevel)>,
    allocator: Option<Arc<dyn HostAllocator>>,
    #[cfg(not(feature = "runtime-only"))]
    cache_dir: Option<CString>,
    #[cfg(not(feature = "runtime-only"))]
    cache_max_bytes: Option<u64>,
    #[cfg(not(feature = "runtime-only"))]
    interp_memory_limit: Option<u64>,
    kernel_cache_capacity: Option<u32>,
    error: Option<Error>,
}

impl ContextBuilder {
    /// Sends the library's messages up to `max_level` to `sink`, which may be called from any
    /// thread that uses the context (the CPU target's workers included).
    pub fn log<F>(mut self, max_level: LogLevel, sink: F) -> Self
    where
        F: Fn(LogLevel, &str) + Send + Sync + 'static,
    {
        self.log = Some((Box::new(sink), max_level));
        self
    }

    /// Routes the memory behind the context's handles through `allocator`.
    pub fn allocator(mut self, allocator: Arc<dyn HostAllocator>) -> Self {
        self.allocator = Some(allocator);
        self
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The directory of the disk cache of compiled kernels (made when missing); an empty path
    /// turns the disk cache off. Unset: `$TRI_CACHE_DIR`, else `$XDG_CACHE_HOME/tri`, else
    /// `~/.cache/tri`.
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> Self {
        match path_cstring(dir.as_ref()) {
            Ok(c) => self.cache_dir = Some(c),
            Err(e) => self.error = Some(e),
        }
        self
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The disk cache's size bound in bytes (default 1 GiB; 0: no bound); least recently used
    /// entries go first.
    pub fn cache_max_bytes(mut self, bytes: u64) -> Self {
        self.cache_max_bytes = Some(bytes);
        self
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The "interp" target's working-memory budget per launch in bytes (0, the default: none);
    /// a launch that would need more fails before running with `ErrorKind::LimitExceeded`.
    pub fn interp_memory_limit(mut self, bytes: u64) -> Self {
        self.interp_memory_limit = Some(bytes);
        self
    }

    /// How many compiled specializations each module keeps in memory for later compiles to find
    /// (default 64; 0 keeps none that no `Kernel` holds).
    pub fn kernel_cache_capacity(mut self, count: u32) -> Self {
        self.kernel_cache_capacity = Some(count);
        self
    }

    pub fn build(self) -> Result<Context> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let options = RawContextOptions::new()?;
        // The boxes move into ContextInner below; their heap addresses do not change.
        let log = self.log.map(|(f, level)| (Box::new(f), level));
        if let Some((sink, level)) = &log {
            let user = &**sink as *const Box<LogFn> as *mut sys::c_void;
            // SAFETY: the options handle is live; `user` outlives the context (see ContextInner).
            check(unsafe { sys::tri_context_options_set_log(options.0, Some(log_trampoline), user, level.raw()) })?;
        }
        let allocator = self.allocator.map(Box::new);
        if let Some(a) = &allocator {
            let user = &**a as *const Arc<dyn HostAllocator> as *mut sys::c_void;
            // SAFETY: as for the log sink.
            check(unsafe {
                sys::tri_context_options_set_allocator(options.0, user, Some(alloc_trampoline), Some(free_trampoline))
            })?;
        }
        // The compiler's options (libtri only: the feature runtime-only leaves them out).
        #[cfg(not(feature = "runtime-only"))]
        {
            if let Some(dir) = &self.cache_dir {
                // SAFETY: the string is NUL-terminated; the library copies it.
                check(unsafe { sys::tri_context_options_set_cache_dir(options.0, dir.as_ptr()) })?;
            }
            // SAFETY (the three setters): a live options handle and plain values.
            if let Some(bytes) = self.cache_max_bytes {
                check(unsafe { sys::tri_context_options_set_cache_max_bytes(options.0, bytes) })?;
            }
            if let Some(bytes) = self.interp_memory_limit {
                check(unsafe { sys::tri_context_options_set_interp_memory_limit(options.0, bytes) })?;
            }
        }
        if let Some(count) = self.kernel_cache_capacity {
            check(unsafe { sys::tri_context_options_set_kernel_cache_capacity(options.0, count) })?;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: the options are copied by tri_context_create, so they may be dropped after.
        check(unsafe { sys::tri_context_create(options.0, sys::TRI_VERSION_NUMBER, &mut raw) })?;
        Ok(Context { inner: Arc::new(ContextInner { raw, _log: log.map(|(sink, _)| sink), _allocator: allocator }) })
    }
}

/// Owns a tri_context_options for the span of ContextBuilder::build.
struct RawContextOptions(*mut sys::tri_context_options);

impl RawContextOptions {
    fn new() -> Result<Self> {
        let mut raw = ptr::null_mut();
        // SAFETY: out-parameter written on success only.
        check(unsafe { sys::tri_context_options_create(&mut raw) })?;
        Ok(RawContextOptions(raw))
    }
}

impl Drop for RawContextOptions {
    fn drop(&mut self) {
        // SAFETY: made by tri_context_options_create, released once.
        unsafe { sys::tri_context_options_destroy(self.0) }
    }
}

unsafe extern "C" fn log_trampoline(user: *mut sys::c_void, level: i32, message: *const sys::c_char) {
    // A panic must not unwind into C; a sink that panics loses that one message.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let sink = &*(user as *const Box<LogFn>);
        let text = CStr::from_ptr(message).to_string_lossy();
        sink(LogLevel::from_raw(level), &text);
    }));
}

unsafe extern "C" fn alloc_trampoline(user: *mut sys::c_void, size: usize, align: usize) -> *mut sys::c_void {
    catch_unwind(AssertUnwindSafe(|| {
        let a = &*(user as *const Arc<dyn HostAllocator>);
        a.alloc(size, align) as *mut sys::c_void
    }))
    .unwrap_or(ptr::null_mut())
}

unsafe extern "C" fn free_trampoline(user: *mut sys::c_void, p: *mut sys::c_void, size: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let a = &*(user as *const Arc<dyn HostAllocator>);
        a.free(p as *mut u8, size)
    }));
}

pub(crate) struct ContextInner {
    pub(crate) raw: *mut sys::tri_context,
    // Kept for the C side's callbacks; dropped after tri_context_destroy in Drop, and only when
    // no module, kernel or blob (each holds a Context) can still reach them.
    _log: Option<Box<Box<LogFn>>>,
    _allocator: Option<Box<Arc<dyn HostAllocator>>>,
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // SAFETY: made by tri_context_create; this is the crate's only reference.
        unsafe { sys::tri_context_destroy(self.raw) }
    }
}

// SAFETY: tri.h: "A context ... may be used from many threads at once", and the callbacks it
// holds are Send + Sync by the bounds of ContextBuilder::log and HostAllocator.
unsafe impl Send for ContextInner {}
// SAFETY: as for Send; no method takes the context mutably on the C side.
unsafe impl Sync for ContextInner {}

/// A Tri context: the root of modules and compiled kernels. Cloning is cheap (a reference
/// count); the C context lives while any clone, module, kernel or blob made from it lives.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl Context {
    /// A context with the default options (no log sink, the C allocator, the default disk
    /// cache directory).
    pub fn new() -> Result<Context> {
        ContextBuilder::default().build()
    }

    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_context {
        self.inner.raw
    }

    /// Stops every launch of this context on a host target ("cpu", "interp") running now: each
    /// returns `ErrorKind::Cancelled` (the stores it made stay made). Launches that begin later
    /// run normally; GPU launches are not stopped. Callable from any thread and from the log sink.
    pub fn cancel(&self) -> Result<()> {
        // SAFETY: a live context; tri_context_cancel is thread-safe.
        check(unsafe { sys::tri_context_cancel(self.inner.raw) })
    }
}

/// The version of the running library as (major, minor, patch).
pub fn version() -> (u32, u32, u32) {
    // SAFETY: no arguments, cannot fail.
    let v = unsafe { sys::tri_version() };
    (v / 10000, v / 100 % 100, v % 100)
}

#[cfg(not(feature = "runtime-only"))]
pub(crate) fn path_cstring(path: &Path) -> Result<CString> {
    let s = path
        .to_str()
        .ok_or_else(|| Error::new(sys::TRI_ERROR_INVALID_ARGUMENT, format!("path {:?} is not valid UTF-8", path)))?;
    cstring(s, "path")
}

pub(crate) fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::new(sys::TRI_ERROR_INVALID_ARGUMENT, format!("{} {:?} contains a NUL byte", what, s)))
}
