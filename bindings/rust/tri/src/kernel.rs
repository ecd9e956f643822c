// Compile options (a builder), compiled kernels, and launches whose arguments are checked
// against the kernel's reflected signature before the C call, so a wrong argument is an Error
// naming it rather than memory read as the wrong type. Host kernels ("cpu", "interp") take
// slices; "cuda" kernels take device pointers and run on a stream.

use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use tri_sys as sys;

use crate::context::{cstring, Context};
use crate::device::{DevicePtr, Stream};
use crate::error::{check, Error, Result};
use crate::module::{Blob, DType, Module, ParamKind, TypeKind};
use crate::plan::LaunchPlan;

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// LLVM ORC JIT for the host CPU (the default).
    Cpu,
    /// The reference interpreter: slow and exact; with `checked`, a debugging tool.
    Interp,
    /// NVIDIA GPUs: PTX launched through the CUDA driver on a stream, on device memory.
    Cuda,
}

impl Target {
    /// The target's name in the C API ("cpu").
    pub fn name(self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
            Target::Interp => "interp",
            Target::Cuda => "cuda",
        }
    }
}

/// Whether a target's kernels take device memory (Some(true)) or host memory (Some(false));
/// None for a target this crate does not know.
fn on_device(target: &str) -> Option<bool> {
    match target {
        "cpu" | "interp" => Some(false),
        "cuda" => Some(true),
        _ => None,
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
    NumWarps(i32),
    NumStages(i32),
    Arch(String),
    LaunchSpecialization(bool, u32),
    ArgSpecialization(u32, bool),
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

    /// Warps per program instance on GPU targets: 1, 2, 4 (the default), 8, 16 or 32. Host
    /// targets ignore it.
    pub fn num_warps(mut self, warps: i32) -> Self {
        self.settings.push(Setting::NumWarps(warps));
        self
    }

    /// How many iterations ahead a loop that feeds `dot` loads its operands, as stages (0: the
    /// target's default; 1 to 4). The results do not change.
    pub fn num_stages(mut self, stages: i32) -> Self {
        self.settings.push(Setting::NumStages(stages));
        self
    }

    /// The GPU architecture to compile for ("sm_80", "sm_90", "sm_90a"). Unset, the current
    /// device's, which needs a driver; named, PTX is made on any machine.
    pub fn arch(mut self, arch: &str) -> Self {
        self.settings.push(Setting::Arch(arch.to_string()));
        self
    }

    /// Launch-time specialization (on by default for Cuda, off for Cpu; Interp ignores it):
    /// each launch classes its arguments (pointers aligned to 16, integers divisible by 16) and
    /// runs a variant compiled for those classes, at most `max_variants` (16 at most; default 8)
    /// of them. Off, the launch path never compiles.
    pub fn launch_specialization(mut self, on: bool, max_variants: u32) -> Self {
        self.settings.push(Setting::LaunchSpecialization(on, max_variants));
        self
    }

    /// Takes runtime parameter `param` (below 32) out of launch-time specialization (false) or
    /// puts it back (true, the default).
    pub fn arg_specialization(mut self, param: u32, on: bool) -> Self {
        self.settings.push(Setting::ArgSpecialization(param, on));
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
                Setting::Align(p, a) => {
                    check(unsafe { sys::tri_compile_options_set_arg_align(o, *p, *a) })?;
                    options.aligns.retain(|(q, _)| q != p);
                    options.aligns.push((*p, *a));
                }
                Setting::Divisible(p, d) => check(unsafe { sys::tri_compile_options_set_arg_divisible(o, *p, *d) })?,
                Setting::NumWarps(w) => check(unsafe { sys::tri_compile_options_set_num_warps(o, *w) })?,
                Setting::NumStages(s) => check(unsafe { sys::tri_compile_options_set_num_stages(o, *s) })?,
                Setting::Arch(a) => {
                    let c = cstring(a, "architecture")?;
                    check(unsafe { sys::tri_compile_options_set_arch(o, c.as_ptr()) })?
                }
                Setting::LaunchSpecialization(on, max) => {
                    check(unsafe { sys::tri_compile_options_set_launch_specialization(o, *on as i32, *max) })?
                }
                Setting::ArgSpecialization(p, on) => {
                    check(unsafe { sys::tri_compile_options_set_arg_specialization(o, *p, *on as i32) })?
                }
            }
        }
        Ok(options)
    }
}

/// Options for compiling a kernel: target "cpu", no constexprs (defaults apply), no facts.
pub struct CompileOptions {
    pub(crate) raw: *mut sys::tri_compile_options,
    pub(crate) target: String,
    /// The arg_align promises (runtime parameter, bytes): launches check them.
    pub(crate) aligns: Vec<(u32, u32)>,
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
        Ok(CompileOptions { raw, target: "cpu".to_string(), aligns: Vec::new() })
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

/// What memory a pointer argument points into, so a launch can refuse host memory for a GPU
/// kernel and device memory for a host one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Value,
    Host,
    Device,
    /// Raw parts: the caller vouches for it.
    Any,
}

/// One launch argument. Buffers borrow the slice for `'a`, so it cannot be freed or moved while
/// the argument (or a launch plan holding it) exists.
#[derive(Clone, Copy)]
pub struct Arg<'a> {
    raw: sys::tri_arg,
    space: Space,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> Arg<'a> {
    pub(crate) fn pointer(p: *const sys::c_void, extent: u64, dtype: DType, space: Space) -> Arg<'a> {
        Arg {
            raw: sys::tri_arg {
                value: sys::tri_arg_value { p },
                extent,
                kind: sys::TRI_TYPE_POINTER,
                dtype: dtype.raw(),
            },
            space,
            _borrow: PhantomData,
        }
    }

    /// A host buffer the kernel only reads ("cpu" and "interp" kernels).
    pub fn slice<T: Element>(s: &'a [T]) -> Arg<'a> {
        Arg::pointer(s.as_ptr() as *const sys::c_void, std::mem::size_of_val(s) as u64, T::DTYPE, Space::Host)
    }

    /// A host buffer the kernel may write ("cpu" and "interp" kernels).
    pub fn slice_mut<T: Element>(s: &'a mut [T]) -> Arg<'a> {
        Arg::pointer(s.as_mut_ptr() as *const sys::c_void, std::mem::size_of_val(s) as u64, T::DTYPE, Space::Host)
    }

    /// `len` elements of `T` in device memory at `ptr`, for "cuda" kernels. Making the argument
    /// is safe (it is an address); launching with it is `unsafe`, and there the memory must be
    /// allocated, on the launch's device, until the work queued on it is done.
    pub fn device<T: Element>(ptr: DevicePtr, len: usize) -> Arg<'a> {
        Arg::device_bytes(ptr, (len * std::mem::size_of::<T>()) as u64, T::DTYPE)
    }

    /// Device memory of `extent` bytes (0: unknown) of element type `dtype` (bf16, f8 ...).
    pub fn device_bytes(ptr: DevicePtr, extent: u64, dtype: DType) -> Arg<'a> {
        Arg::pointer(ptr.0 as usize as *const sys::c_void, extent, dtype, Space::Device)
    }

    /// A pointer to memory this crate does not manage, `extent` bytes long (0: unknown), whose
    /// elements are `dtype` (f16/bf16/f8 buffers go this way). Accepted by every target.
    ///
    /// # Safety
    /// The memory must stay valid, and be usable by the kernel's target, for as long as the
    /// returned argument is used.
    pub unsafe fn from_raw_parts(ptr: *const std::ffi::c_void, extent: u64, dtype: DType) -> Arg<'a> {
        Arg::pointer(ptr as *const sys::c_void, extent, dtype, Space::Any)
    }

    fn int(v: i64, dtype: DType) -> Arg<'a> {
        Arg {
            raw: sys::tri_arg {
                value: sys::tri_arg_value { i: v },
                extent: 0,
                kind: sys::TRI_TYPE_SCALAR,
                dtype: dtype.raw(),
            },
            space: Space::Value,
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
            space: Space::Value,
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
        match self.space {
            Space::Value => format!("a {} value", d),
            Space::Host => format!("a host buffer of {}", d),
            Space::Device => format!("a device buffer of {}", d),
            Space::Any => format!("a buffer of {}", d),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RuntimeParam {
    name: String,
    pointer: bool,
    dtype: DType,
    text: String,
    /// The alignment the kernel was compiled for (an {align=N} fact, or an arg_align promise).
    align: u32,
}

/// What a launch is checked against: the kernel's name, target and runtime parameters. Shared
/// by the kernel and its launch plans.
#[derive(Debug)]
pub(crate) struct Signature {
    pub(crate) name: String,
    pub(crate) target: String,
    params: Vec<RuntimeParam>,
    /// `on_device(target)`, worked out once: launches check it for every argument.
    device: Option<bool>,
}

impl Signature {
    fn new(name: &str, target: &str, params: Vec<RuntimeParam>) -> Signature {
        Signature { name: name.to_string(), target: target.to_string(), params, device: on_device(target) }
    }

    /// Kernel `name` of `module` as compiled with `options`: its runtime parameters, by
    /// reflection, and the alignment each pointer was compiled for.
    pub(crate) fn of(module: &Module, name: &str, options: &CompileOptions) -> Result<Signature> {
        let function = module.function(name)?;
        let params = function
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Value)
            .enumerate()
            .map(|(i, p)| RuntimeParam {
                name: p.name.clone(),
                pointer: p.type_kind == TypeKind::Pointer,
                dtype: p.dtype,
                text: p.type_text.clone(),
                align: options.aligns.iter().filter(|(q, _)| *q as usize == i).map(|(_, a)| *a).fold(p.align, u32::max),
            })
            .collect();
        Ok(Signature::new(name, &options.target, params))
    }

    /// The index of runtime parameter `name` (without '%') among the runtime parameters.
    #[cfg_attr(feature = "runtime-only", allow(dead_code))] // the tuner's
    pub(crate) fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }

    /// Whether the kernel takes device memory; Unsupported for a target this crate does not know.
    pub(crate) fn on_device(&self) -> Result<bool> {
        self.device.ok_or_else(|| {
            Error::new(
                sys::TRI_ERROR_UNSUPPORTED,
                format!(
                    "kernel @{} was compiled for target \"{}\"; this crate launches \"cpu\" and \"interp\" kernels (host \
                     memory) and \"cuda\" ones (device memory)",
                    self.name, self.target
                ),
            )
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.params.len()
    }

    /// Checks argument `i` against parameter `i`: buffer or value, element type, memory space.
    pub(crate) fn check_arg(&self, i: usize, a: &Arg) -> Result<()> {
        let p = self.params.get(i).ok_or_else(|| {
            Error::new(
                sys::TRI_ERROR_LAUNCH_ARGS,
                format!("kernel @{} takes {} arguments; there is no argument {}", self.name, self.params.len(), i),
            )
        })?;
        let device = self.on_device()?;
        let pointer = a.raw.kind == sys::TRI_TYPE_POINTER;
        let wrong_space = (device && a.space == Space::Host) || (!device && a.space == Space::Device);
        if pointer != p.pointer || a.raw.dtype != p.dtype.raw() || wrong_space {
            let wanted = if !p.pointer {
                format!("a {} value", p.dtype.name())
            } else if device {
                format!("a device buffer of {} (the kernel runs on the GPU)", p.dtype.name())
            } else {
                format!("a buffer of {}", p.dtype.name())
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
        // Every target would read a misaligned pointer wrong or fault on it; the address is here.
        // SAFETY: a pointer argument's value is its `p` field.
        let address = if pointer { (unsafe { a.raw.value.p }) as usize } else { 0 };
        if p.align > 1 && address % p.align as usize != 0 {
            return Err(Error::new(
                sys::TRI_ERROR_LAUNCH_ARGS,
                format!(
                    "argument {} (%{}) of kernel @{} is {} with {{align={}}}, but the address given, {:#x}, is not a \
                     multiple of {}: pass memory that starts on a {}-byte boundary (a subslice moves the start; \
                     copy it), or compile without that fact",
                    i, p.name, self.name, p.text, p.align, address, p.align, p.align
                ),
            ));
        }
        Ok(())
    }

    /// Checks the count, then each argument.
    pub(crate) fn check_args(&self, args: &[Arg]) -> Result<()> {
        self.on_device()?;
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
        args.iter().enumerate().try_for_each(|(i, a)| self.check_arg(i, a))
    }
}

/// A kernel compiled for one target and one specialization. It keeps its module and context
/// alive, so it may outlive the `Module` it came from.
pub struct Kernel {
    raw: *mut sys::tri_kernel,
    sig: Arc<Signature>,
    ctx: Context,
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
    #[cfg(not(feature = "runtime-only"))]
    pub(crate) fn compile(module: &Module, name: &str, options: &CompileOptions) -> Result<Kernel> {
        let cname = cstring(name, "kernel name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: live module and options; compiling concurrently is allowed by tri.h.
        check(unsafe { sys::tri_kernel_compile(module.as_raw(), cname.as_ptr(), options.raw, &mut raw) })?;
        Kernel::adopt(module, name, options, raw)
    }

    pub(crate) fn from_package(module: &Module, name: &str, options: &CompileOptions) -> Result<Kernel> {
        let cname = cstring(name, "kernel name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: live module and options; out-parameter.
        check(unsafe { sys::tri_module_kernel(module.as_raw(), cname.as_ptr(), options.raw, &mut raw) })?;
        Kernel::adopt(module, name, options, raw)
    }

    /// Takes ownership of `raw`, kernel `name` of `module` compiled for `target` by the library
    /// (tri_kernel_compile, tri_tune); it is released on every path, errors included.
    pub(crate) fn adopt(
        module: &Module,
        name: &str,
        options: &CompileOptions,
        raw: *mut sys::tri_kernel,
    ) -> Result<Kernel> {
        let mut kernel = Kernel {
            raw,
            sig: Arc::new(Signature::new(name, &options.target, Vec::new())),
            ctx: module.context().clone(),
        };
        let mut count = 0u32;
        // SAFETY: live kernel; out-parameter.
        check(unsafe { sys::tri_kernel_arg_count(kernel.raw, &mut count) })?;
        let sig = Signature::of(module, name, options)?;
        if sig.len() != count as usize {
            return Err(Error::new(
                sys::TRI_ERROR_INTERNAL,
                format!("kernel @{} reflects {} runtime parameters but takes {} arguments", name, sig.len(), count),
            ));
        }
        kernel.sig = Arc::new(sig);
        Ok(kernel)
    }

    pub fn name(&self) -> &str {
        &self.sig.name
    }

    /// The target it was compiled for ("cpu", "interp", "cuda").
    pub fn target(&self) -> &str {
        &self.sig.target
    }

    /// How many arguments a launch takes.
    pub fn arg_count(&self) -> usize {
        self.sig.len()
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The specialized IR the kernel was compiled from.
    pub fn to_text(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live kernel; out-parameter.
        check(unsafe { sys::tri_kernel_to_text(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    #[cfg(not(feature = "runtime-only"))]
    /// Code the target made, by kind: "llvm" (LLVM IR after optimization) for Cpu and Cuda;
    /// "asm" (the host assembly) for Cpu; "ptx" (the PTX module) and "metadata" (the launch
    /// descriptor, JSON) for Cuda. Stages a compile does not keep are made on the first call.
    /// `ErrorKind::NotFound` when the target makes nothing of that kind (the message lists what
    /// it makes). The binary "cubin" (Cuda, where a driver made one) is `code_bytes`'s.
    pub fn code(&self, kind: &str) -> Result<String> {
        let ckind = cstring(kind, "code kind")?;
        let mut blob = ptr::null_mut();
        // SAFETY: live kernel, NUL-terminated kind, out-parameter.
        check(unsafe { sys::tri_kernel_code(self.raw, ckind.as_ptr(), &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    #[cfg(not(feature = "runtime-only"))]
    /// `code` as bytes: for "cubin", the machine code the driver made from the PTX (Cuda, with a
    /// GPU), which is not text.
    pub fn code_bytes(&self, kind: &str) -> Result<Vec<u8>> {
        let ckind = cstring(kind, "code kind")?;
        let mut blob = ptr::null_mut();
        // SAFETY: live kernel, NUL-terminated kind, out-parameter.
        check(unsafe { sys::tri_kernel_code(self.raw, ckind.as_ptr(), &mut blob) })?;
        Ok(Blob::from_raw(blob, &self.ctx).to_vec())
    }

    /// The variants launch-time specialization has made so far, as JSON (docs/capi.md,
    /// "Variants"): `{"schema": 1, "max_variants": n, "variants": [{"key", "classes", "reason"}]}`.
    pub fn variants(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live kernel; out-parameter.
        check(unsafe { sys::tri_kernel_variants(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_kernel {
        self.raw
    }

    /// What launches are checked against (team launches check each rank's arguments with it).
    pub(crate) fn signature(&self) -> &Signature {
        &self.sig
    }

    /// Checks `args` against the kernel's runtime parameters (count, buffer or value, dtype,
    /// host or device memory).
    pub fn check_args(&self, args: &[Arg]) -> Result<()> {
        self.sig.check_args(args)
    }

    /// Runs the kernel over `grid`. Host targets return when every program instance has
    /// finished; a Cuda kernel is queued on the default stream (see `launch_on`).
    ///
    /// # Safety
    /// A kernel is code that reads and writes through its pointer arguments: it must stay
    /// within each buffer's extent and write only to buffers passed with `Arg::slice_mut` (or
    /// raw parts, or device memory, the caller may write). Device memory must stay allocated
    /// until the queued work is done. The argument types are checked; what the kernel does
    /// with them cannot be, except by the interpreter's checked mode, which reports accesses
    /// outside the extents as an Error.
    pub unsafe fn launch(&self, grid: impl Into<Grid>, args: &[Arg]) -> Result<()> {
        self.launch_on(ptr::null_mut(), grid, args)
    }

    /// Queues a Cuda kernel on `stream` (a `CUstream`; null is the default stream) and returns;
    /// errors of the kernel itself surface at the caller's next synchronization. Host targets
    /// take only a null stream (`ErrorKind::InvalidArgument` otherwise).
    ///
    /// # Safety
    /// As for `launch`; `stream` must be a live stream of the device the memory is on.
    pub unsafe fn launch_on(&self, stream: Stream, grid: impl Into<Grid>, args: &[Arg]) -> Result<()> {
        self.check_args(args)?;
        let Grid(x, y, z) = grid.into();
        with_raw_args(args, |raw| check(sys::tri_launch(self.raw, x, y, z, stream, raw.as_ptr(), raw.len() as u32)))
    }

    /// A prepared launch on the default stream: the grid and arguments checked and encoded once;
    /// the plan's setters change one thing and `LaunchPlan::launch` runs it with no checking or
    /// encoding. The plan borrows the slices it was given for `'a`.
    pub fn plan<'a>(&self, grid: impl Into<Grid>, args: &[Arg<'a>]) -> Result<LaunchPlan<'a>> {
        self.plan_on(ptr::null_mut(), grid, args)
    }

    /// A prepared launch on `stream` (see `launch_on`).
    pub fn plan_on<'a>(&self, stream: Stream, grid: impl Into<Grid>, args: &[Arg<'a>]) -> Result<LaunchPlan<'a>> {
        self.check_args(args)?;
        with_raw_args(args, |raw| {
            LaunchPlan::create(self.raw, self.sig.clone(), self.ctx.clone(), grid.into(), stream, raw)
        })
    }
}

/// Calls `f` with the arguments as the C API takes them, in a buffer on the stack for up to 32
/// (a launch allocates nothing), on the heap beyond.
pub(crate) fn with_raw_args<R>(args: &[Arg], f: impl FnOnce(&[sys::tri_arg]) -> R) -> R {
    const STACK: usize = 32;
    if args.len() > STACK {
        let raw: Vec<sys::tri_arg> = args.iter().map(|a| a.raw).collect();
        return f(&raw);
    }
    let mut buf = [std::mem::MaybeUninit::<sys::tri_arg>::uninit(); STACK];
    for (slot, a) in buf.iter_mut().zip(args) {
        *slot = std::mem::MaybeUninit::new(a.raw);
    }
    // SAFETY: the first args.len() elements were written just above; tri_arg is plain data.
    let raw = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const sys::tri_arg, args.len()) };
    f(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    // No target newer than this crate exists; the kernel is relabelled to reach the check.
    #[test]
    fn kernels_of_unknown_targets_are_not_launched() {
        let ctx = Context::new().unwrap();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/vector_add.tri");
        let module = Module::from_file(&ctx, path).unwrap();
        let mut kernel = module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap();
        let params = kernel.sig.params.clone();
        kernel.sig = Arc::new(Signature::new("vector_add", "tpu", params));
        let x = vec![1.0f32; 4];
        let mut out = vec![0.0f32; 4];
        let args = [Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(4)];
        // SAFETY: refused before the call.
        let err = unsafe { kernel.launch(1, &args) }.unwrap_err();
        assert_eq!(err.code(), sys::TRI_ERROR_UNSUPPORTED);
        assert!(err.message().contains("target \"tpu\""), "{}", err);
        assert_eq!(kernel.plan(1, &args).err().unwrap().code(), sys::TRI_ERROR_UNSUPPORTED);
    }
}
