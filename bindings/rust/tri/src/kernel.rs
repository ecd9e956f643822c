// Compile options (a builder), compiled kernels, and launches whose arguments are checked
// against the kernel's reflected signature before the C call, so a wrong argument is an Error
// naming it rather than memory read as the wrong type.

use std::marker::PhantomData;
use std::ptr;

use tri_sys as sys;

use crate::context::{cstring, Context};
use crate::error::{check, Error, Result};
use crate::module::{Blob, DType, Module, ParamKind, TypeKind};

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// LLVM ORC JIT for the host CPU (the default).
    Cpu,
    /// The reference interpreter: slow and exact; with `checked`, a debugging tool.
    Interp,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
            Target::Interp => "interp",
        }
    }
}

#[derive(Clone, Debug)]
enum Setting {
    Target(String),
    Checked(bool),
    ConstInt(String, i64),
    ConstFloat(String, f64),
    Align(u32, u32),
    Divisible(u32, u32),
}

/// Collects compile options; `build` makes the C options object and reports the first setting
/// the library refuses.
#[derive(Clone, Debug, Default)]
pub struct CompileOptionsBuilder {
    settings: Vec<Setting>,
}

impl CompileOptionsBuilder {
    pub fn target(self, target: Target) -> Self {
        self.target_name(target.name())
    }

    /// A target by name, for targets newer than this crate.
    pub fn target_name(mut self, name: &str) -> Self {
        self.settings.push(Setting::Target(name.to_string()));
        self
    }

    /// Bounds and undefined-lane checks (target Interp only).
    pub fn checked(mut self, on: bool) -> Self {
        self.settings.push(Setting::Checked(on));
        self
    }

    /// An integer (or i1: 0/1) constexpr.
    pub fn constexpr_int(mut self, name: &str, value: i64) -> Self {
        self.settings.push(Setting::ConstInt(name.to_string(), value));
        self
    }

    pub fn constexpr_float(mut self, name: &str, value: f64) -> Self {
        self.settings.push(Setting::ConstFloat(name.to_string(), value));
        self
    }

    /// Promises that runtime parameter `param` (0-based among runtime parameters) is aligned.
    pub fn arg_align(mut self, param: u32, align: u32) -> Self {
        self.settings.push(Setting::Align(param, align));
        self
    }

    pub fn arg_divisible(mut self, param: u32, divisible: u32) -> Self {
        self.settings.push(Setting::Divisible(param, divisible));
        self
    }

    pub fn build(self) -> Result<CompileOptions> {
        let mut options = CompileOptions::new()?;
        for s in &self.settings {
            let o = options.raw;
            // SAFETY: live options owned by `options`; strings NUL-terminated and copied.
            match s {
                Setting::Target(t) => {
                    let c = cstring(t, "target")?;
                    check(unsafe { sys::tri_compile_options_set_target(o, c.as_ptr()) })?;
                    options.target = t.clone();
                }
                Setting::Checked(on) => check(unsafe { sys::tri_compile_options_set_checked(o, *on as i32) })?,
                Setting::ConstInt(n, v) => {
                    let c = cstring(n, "constexpr name")?;
                    check(unsafe { sys::tri_compile_options_set_constexpr_int(o, c.as_ptr(), *v) })?
                }
                Setting::ConstFloat(n, v) => {
                    let c = cstring(n, "constexpr name")?;
                    check(unsafe { sys::tri_compile_options_set_constexpr_float(o, c.as_ptr(), *v) })?
                }
                Setting::Align(p, a) => check(unsafe { sys::tri_compile_options_set_arg_align(o, *p, *a) })?,
                Setting::Divisible(p, d) => check(unsafe { sys::tri_compile_options_set_arg_divisible(o, *p, *d) })?,
            }
        }
        Ok(options)
    }
}

/// Options for compiling a kernel: target "cpu", no constexprs (defaults apply), no facts.
pub struct CompileOptions {
    raw: *mut sys::tri_compile_options,
    target: String,
}

// SAFETY: the options object belongs to this value alone and has no thread affinity, so it may
// move to another thread. It is deliberately not Sync: tri.h says options objects are not
// thread-safe, so two threads must not read one while it could change.
unsafe impl Send for CompileOptions {}

impl CompileOptions {
    /// The defaults.
    pub fn new() -> Result<CompileOptions> {
        let mut raw = ptr::null_mut();
        // SAFETY: out-parameter written on success.
        check(unsafe { sys::tri_compile_options_create(&mut raw) })?;
        Ok(CompileOptions { raw, target: "cpu".to_string() })
    }

    pub fn builder() -> CompileOptionsBuilder {
        CompileOptionsBuilder::default()
    }
}

impl Drop for CompileOptions {
    fn drop(&mut self) {
        // SAFETY: made by tri_compile_options_create, released once.
        unsafe { sys::tri_compile_options_destroy(self.raw) }
    }
}

/// Grid dimensions: program instances along x, y and z (x below 2^31, y and z below 2^16; a zero
/// in any launches nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid(pub u32, pub u32, pub u32);

impl From<u32> for Grid {
    fn from(x: u32) -> Grid {
        Grid(x, 1, 1)
    }
}
impl From<(u32, u32)> for Grid {
    fn from((x, y): (u32, u32)) -> Grid {
        Grid(x, y, 1)
    }
}
impl From<(u32, u32, u32)> for Grid {
    fn from((x, y, z): (u32, u32, u32)) -> Grid {
        Grid(x, y, z)
    }
}

/// Rust element types that match a Tri dtype bit for bit (integers are signless in Tri).
pub trait Element: Copy + 'static {
    const DTYPE: DType;
}
macro_rules! element {
    ($($t:ty => $d:ident),*) => { $(impl Element for $t { const DTYPE: DType = DType::$d; })* };
}
element!(i8 => I8, u8 => I8, i16 => I16, u16 => I16, i32 => I32, u32 => I32, i64 => I64, u64 => I64,
         f32 => F32, f64 => F64);

/// One launch argument. Buffers borrow the slice for `'a`, so it cannot be freed or moved while
/// the argument exists.
#[derive(Clone, Copy)]
pub struct Arg<'a> {
    raw: sys::tri_arg,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> Arg<'a> {
    fn pointer(p: *const sys::c_void, extent: u64, dtype: DType) -> Arg<'a> {
        Arg {
            raw: sys::tri_arg {
                value: sys::tri_arg_value { p },
                extent,
                kind: sys::TRI_TYPE_POINTER,
                dtype: dtype.raw(),
            },
            _borrow: PhantomData,
        }
    }

    /// A buffer the kernel only reads.
    pub fn slice<T: Element>(s: &'a [T]) -> Arg<'a> {
        Arg::pointer(s.as_ptr() as *const sys::c_void, std::mem::size_of_val(s) as u64, T::DTYPE)
    }

    /// A buffer the kernel may write.
    pub fn slice_mut<T: Element>(s: &'a mut [T]) -> Arg<'a> {
        Arg::pointer(s.as_mut_ptr() as *const sys::c_void, std::mem::size_of_val(s) as u64, T::DTYPE)
    }

    /// A pointer to memory this crate does not manage, `extent` bytes long (0: unknown), whose
    /// elements are `dtype` (f16/bf16/f8 buffers go this way).
    ///
    /// # Safety
    /// The memory must stay valid, and be usable by the kernel's target, for as long as the
    /// returned argument is used.
    pub unsafe fn from_raw_parts(ptr: *const std::ffi::c_void, extent: u64, dtype: DType) -> Arg<'a> {
        Arg::pointer(ptr as *const sys::c_void, extent, dtype)
    }

    fn int(v: i64, dtype: DType) -> Arg<'a> {
        Arg {
            raw: sys::tri_arg {
                value: sys::tri_arg_value { i: v },
                extent: 0,
                kind: sys::TRI_TYPE_SCALAR,
                dtype: dtype.raw(),
            },
            _borrow: PhantomData,
        }
    }

    fn float(v: f64, dtype: DType) -> Arg<'a> {
        Arg {
            raw: sys::tri_arg {
                value: sys::tri_arg_value { f: v },
                extent: 0,
                kind: sys::TRI_TYPE_SCALAR,
                dtype: dtype.raw(),
            },
            _borrow: PhantomData,
        }
    }

    pub fn bool(v: bool) -> Arg<'a> {
        Arg::int(v as i64, DType::I1)
    }
    pub fn i8(v: i8) -> Arg<'a> {
        Arg::int(v as i64, DType::I8)
    }
    pub fn i16(v: i16) -> Arg<'a> {
        Arg::int(v as i64, DType::I16)
    }
    pub fn i32(v: i32) -> Arg<'a> {
        Arg::int(v as i64, DType::I32)
    }
    pub fn i64(v: i64) -> Arg<'a> {
        Arg::int(v, DType::I64)
    }
    pub fn f32(v: f32) -> Arg<'a> {
        Arg::float(v as f64, DType::F32)
    }
    pub fn f64(v: f64) -> Arg<'a> {
        Arg::float(v, DType::F64)
    }

    /// The argument as the C API takes it.
    pub fn as_raw(&self) -> &sys::tri_arg {
        &self.raw
    }

    fn describe(&self) -> String {
        let d = DType::from_raw(self.raw.dtype).map(|d| d.name()).unwrap_or("an unknown type");
        if self.raw.kind == sys::TRI_TYPE_POINTER {
            format!("a buffer of {}", d)
        } else {
            format!("a {} value", d)
        }
    }
}

#[derive(Clone, Debug)]
struct RuntimeParam {
    name: String,
    pointer: bool,
    dtype: DType,
    text: String,
}

/// A kernel compiled for one target and one specialization. It keeps its module and context
/// alive, so it may outlive the `Module` it came from.
pub struct Kernel {
    raw: *mut sys::tri_kernel,
    name: String,
    target: String,
    params: Vec<RuntimeParam>,
    _ctx: Context,
}

// SAFETY: tri.h: "A kernel may be launched from many threads at once", and tri_launch is
// thread-safe; the Rust fields are immutable after compile.
unsafe impl Send for Kernel {}
// SAFETY: see Send.
unsafe impl Sync for Kernel {}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: made by tri_kernel_compile, released once.
        unsafe { sys::tri_kernel_destroy(self.raw) }
    }
}

impl Kernel {
    pub(crate) fn compile(module: &Module, name: &str, options: &CompileOptions) -> Result<Kernel> {
        let cname = cstring(name, "kernel name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: live module and options; compiling concurrently is allowed by tri.h.
        check(unsafe { sys::tri_kernel_compile(module.as_raw(), cname.as_ptr(), options.raw, &mut raw) })?;
        let mut kernel = Kernel {
            raw,
            name: name.to_string(),
            target: options.target.clone(),
            params: Vec::new(),
            _ctx: module.context().clone(),
        };
        let mut count = 0u32;
        // SAFETY: live kernel; out-parameter.
        check(unsafe { sys::tri_kernel_arg_count(kernel.raw, &mut count) })?;
        let function = module.function(name)?;
        let params: Vec<RuntimeParam> = function
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Value)
            .map(|p| RuntimeParam {
                name: p.name.clone(),
                pointer: p.type_kind == TypeKind::Pointer,
                dtype: p.dtype,
                text: p.type_text.clone(),
            })
            .collect();
        if params.len() != count as usize {
            return Err(Error::new(
                sys::TRI_ERROR_INTERNAL,
                format!("kernel @{} reflects {} runtime parameters but takes {} arguments", name, params.len(), count),
            ));
        }
        kernel.params = params;
        Ok(kernel)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many arguments a launch takes.
    pub fn arg_count(&self) -> usize {
        self.params.len()
    }

    /// The specialized IR the kernel was compiled from.
    pub fn to_text(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live kernel; out-parameter.
        check(unsafe { sys::tri_kernel_to_text(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self._ctx).into_string()
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_kernel {
        self.raw
    }

    /// Checks `args` against the kernel's runtime parameters (count, buffer or value, dtype).
    pub fn check_args(&self, args: &[Arg]) -> Result<()> {
        if args.len() != self.params.len() {
            let names: Vec<String> = self.params.iter().map(|p| format!("%{}: {}", p.name, p.text)).collect();
            return Err(Error::new(
                sys::TRI_ERROR_LAUNCH_ARGS,
                format!(
                    "kernel @{} takes {} arguments ({}), but {} were given",
                    self.name,
                    self.params.len(),
                    names.join(", "),
                    args.len()
                ),
            ));
        }
        for (i, (p, a)) in self.params.iter().zip(args).enumerate() {
            let pointer = a.raw.kind == sys::TRI_TYPE_POINTER;
            if pointer != p.pointer || a.raw.dtype != p.dtype.raw() {
                let wanted = if p.pointer {
                    "a buffer of ".to_string() + p.dtype.name()
                } else {
                    format!("a {} value", p.dtype.name())
                };
                return Err(Error::new(
                    sys::TRI_ERROR_LAUNCH_ARGS,
                    format!(
                        "argument {} (%{}) of kernel @{} is {}, so it takes {}, but {} was given",
                        i,
                        p.name,
                        self.name,
                        p.text,
                        wanted,
                        a.describe()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Runs the kernel over `grid` and returns when every program instance has finished.
    ///
    /// # Safety
    /// A kernel is code that reads and writes through its pointer arguments: it must stay
    /// within each buffer's extent and write only to buffers passed with `Arg::slice_mut` (or
    /// raw parts the caller may write). The argument types are checked; what the kernel does
    /// with them cannot be, except by the interpreter's checked mode, which reports accesses
    /// outside the extents as an Error.
    pub unsafe fn launch(&self, grid: impl Into<Grid>, args: &[Arg]) -> Result<()> {
        // A GPU target needs device pointers and a stream, which this crate does not pass yet.
        if self.target != "cpu" && self.target != "interp" {
            return Err(Error::new(
                sys::TRI_ERROR_UNSUPPORTED,
                format!(
                    "kernel @{} was compiled for target \"{}\"; this crate launches host targets only (\"cpu\", \"interp\")",
                    self.name, self.target
                ),
            ));
        }
        self.check_args(args)?;
        let Grid(x, y, z) = grid.into();
        let raw: Vec<sys::tri_arg> = args.iter().map(|a| a.raw).collect();
        // No stream: the host targets run synchronously; GPU streams come with the "cuda" target.
        check(sys::tri_launch(self.raw, x, y, z, ptr::null_mut(), raw.as_ptr(), raw.len() as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // No GPU target can be compiled with this header; the kernel is relabelled to reach the check.
    #[test]
    fn kernels_of_other_targets_are_not_launched_with_slices() {
        let ctx = Context::new().unwrap();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples/vector_add.tri");
        let module = Module::from_file(&ctx, path).unwrap();
        let mut kernel = module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap();
        kernel.target = "cuda".to_string();
        let x = vec![1.0f32; 4];
        let mut out = vec![0.0f32; 4];
        // SAFETY: refused before the call.
        let err = unsafe { kernel.launch(1, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(4)]) }
            .unwrap_err();
        assert_eq!(err.code(), sys::TRI_ERROR_UNSUPPORTED);
        assert!(err.message().contains("target \"cuda\""), "{}", err);
    }
}
