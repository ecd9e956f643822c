// Modules (verified IR), the byte blobs the library returns, and reflection of kernel
// signatures, which launches use to check their arguments before calling into C.

use std::ffi::CStr;
use std::path::Path;
use std::ptr;

use tri_sys as sys;

use crate::context::{cstring, Context};
use crate::error::{check, Error, Result};
use crate::kernel::{CompileOptions, Kernel};

/// Element types of pointers, blocks and scalars (`TRI_DTYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    I1,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
    F8E4M3,
    F8E5M2,
}

impl DType {
    pub fn raw(self) -> i32 {
        match self {
            DType::I1 => sys::TRI_DTYPE_I1,
            DType::I8 => sys::TRI_DTYPE_I8,
            DType::I16 => sys::TRI_DTYPE_I16,
            DType::I32 => sys::TRI_DTYPE_I32,
            DType::I64 => sys::TRI_DTYPE_I64,
            DType::F16 => sys::TRI_DTYPE_F16,
            DType::BF16 => sys::TRI_DTYPE_BF16,
            DType::F32 => sys::TRI_DTYPE_F32,
            DType::F64 => sys::TRI_DTYPE_F64,
            DType::F8E4M3 => sys::TRI_DTYPE_F8E4M3,
            DType::F8E5M2 => sys::TRI_DTYPE_F8E5M2,
        }
    }

    pub fn from_raw(raw: i32) -> Option<DType> {
        const ALL: [DType; 11] = [
            DType::I1,
            DType::I8,
            DType::I16,
            DType::I32,
            DType::I64,
            DType::F16,
            DType::BF16,
            DType::F32,
            DType::F64,
            DType::F8E4M3,
            DType::F8E5M2,
        ];
        ALL.iter().copied().find(|d| d.raw() == raw)
    }

    /// The IR spelling ("f32").
    pub fn name(self) -> &'static str {
        match self {
            DType::I1 => "i1",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
        }
    }

    pub fn is_float(self) -> bool {
        !matches!(self, DType::I1 | DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    Kernel,
    Device,
}

/// A runtime parameter (given at launch) or a constexpr (given at compile).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    Value,
    Constexpr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Scalar,
    Pointer,
    Block,
}

/// One parameter of a function, as reflection reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub type_kind: TypeKind,
    /// The scalar's type, a pointer's pointee, a block's element.
    pub dtype: DType,
    /// The type as IR text ("ptr<f32>").
    pub type_text: String,
    pub align: u32,
    pub divisible: u32,
    pub noalias: bool,
    /// A constexpr's default value as IR text.
    pub default: Option<String>,
}

/// A kernel or device function of a module, with its parameters (runtime ones first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub index: u32,
    pub name: String,
    pub kind: FunctionKind,
    pub params: Vec<Param>,
}

/// Bytes the library returned (IR text or binary); they own a copy and keep the context alive.
pub struct Blob {
    raw: *mut sys::tri_blob,
    _ctx: Context,
}

// SAFETY: a blob is immutable bytes owned by this value alone; reading them from another thread
// (Sync) or releasing them there (Send) touches no shared state but the context's allocator,
// which tri.h allows from any thread.
unsafe impl Send for Blob {}
// SAFETY: see Send.
unsafe impl Sync for Blob {}

impl Blob {
    pub(crate) fn from_raw(raw: *mut sys::tri_blob, ctx: &Context) -> Blob {
        Blob { raw, _ctx: ctx.clone() }
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: data and size describe bytes owned by the blob for its lifetime.
        unsafe {
            let n = sys::tri_blob_size(self.raw);
            if n == 0 {
                return &[];
            }
            std::slice::from_raw_parts(sys::tri_blob_data(self.raw) as *const u8, n)
        }
    }

    pub(crate) fn into_string(self) -> Result<String> {
        String::from_utf8(self.as_bytes().to_vec())
            .map_err(|_| Error::new(sys::TRI_ERROR_INTERNAL, "the library returned IR text that is not UTF-8"))
    }
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Drop for Blob {
    fn drop(&mut self) {
        // SAFETY: made by the library, released once.
        unsafe { sys::tri_blob_destroy(self.raw) }
    }
}

/// A verified module of kernels and device functions, made from IR text or binary IR.
pub struct Module {
    raw: *mut sys::tri_module,
    ctx: Context,
}

// SAFETY: tri.h: "A context and a module may be used from many threads at once"; a module is
// immutable once created (docs/capi.md), and tri_kernel_compile is safe to call concurrently.
unsafe impl Send for Module {}
// SAFETY: see Send.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: made by tri_module_create, released once; kernels hold their own reference.
        unsafe { sys::tri_module_destroy(self.raw) }
    }
}

pub(crate) fn c_str(p: *const sys::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library's strings are NUL-terminated and live as long as their module.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

impl Module {
    #[cfg(not(feature = "runtime-only"))]
    /// Reads IR text or binary IR; `source_name` names the input in messages ("softmax.tri").
    pub fn new(ctx: &Context, bytes: &[u8], source_name: &str) -> Result<Module> {
        if bytes.is_empty() {
            // The C call says the same; checking here keeps a null slice pointer away from C.
            return Err(Error::new(
                sys::TRI_ERROR_INVALID_ARGUMENT,
                format!("{}: the IR is empty (give the text or binary IR of a module)", source_name),
            ));
        }
        let name = cstring(source_name, "source name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: the bytes are read during the call only; the out-parameter is written on success.
        check(unsafe {
            sys::tri_module_create(
                ctx.inner.raw,
                bytes.as_ptr() as *const sys::c_void,
                bytes.len(),
                name.as_ptr(),
                &mut raw,
            )
        })?;
        Ok(Module { raw, ctx: ctx.clone() })
    }

    #[cfg(not(feature = "runtime-only"))]
    /// Reads a module from a file; the file's path names it in messages.
    pub fn from_file(ctx: &Context, path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| Error::new(sys::TRI_ERROR_IO, format!("cannot read {}: {}", path.display(), e)))?;
        Module::new(ctx, &bytes, &path.to_string_lossy())
    }

    /// Loads a package made by `tri aot` (docs/aot.md) from its bytes; `name` names it in
    /// messages. Nothing is compiled: `kernel` gives the package's kernels, in libtri and in
    /// libtri_rt (the feature runtime-only) alike. Errors: CorruptBinary for damaged bytes.
    pub fn load_package(ctx: &Context, bytes: &[u8], name: &str) -> Result<Module> {
        let cname = cstring(name, "package name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: the bytes are copied during the call; the out-parameter is written on success.
        check(unsafe {
            sys::tri_module_load_package(
                ctx.inner.raw,
                bytes.as_ptr() as *const sys::c_void,
                bytes.len(),
                cname.as_ptr(),
                &mut raw,
            )
        })?;
        Ok(Module { raw, ctx: ctx.clone() })
    }

    /// Loads the package in the file at `path` (see `load_package`).
    pub fn package_from_file(ctx: &Context, path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| Error::new(sys::TRI_ERROR_IO, format!("cannot read {}: {}", path.display(), e)))?;
        Module::load_package(ctx, &bytes, &path.to_string_lossy())
    }

    /// The kernel `name` this module's package holds for `options`, with its code for this
    /// machine; compiles nothing. NotFound says what the package holds when nothing matches.
    pub fn kernel(&self, name: &str, options: &CompileOptions) -> Result<Kernel> {
        Kernel::from_package(self, name, options)
    }

    /// What this module's package holds, as JSON (tri_module_package_info): its kernels, their
    /// specializations, variants and code per machine.
    pub fn package_info(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live module; out-parameter.
        check(unsafe { sys::tri_module_package_info(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_module {
        self.raw
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The module as canonical IR text (without comments: a function of the module alone).
    pub fn to_text(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live module; out-parameter.
        check(unsafe { sys::tri_module_to_text(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    #[cfg(not(feature = "runtime-only"))]
    /// What `tri fmt` writes: the canonical text with the `//` comments of the text the module
    /// was read from, each where it was (the same as `to_text` for a module read from binary IR).
    pub fn to_text_with_comments(&self) -> Result<String> {
        let mut blob = ptr::null_mut();
        // SAFETY: live module; out-parameter.
        check(unsafe { sys::tri_module_to_text_with_comments(self.raw, &mut blob) })?;
        Blob::from_raw(blob, &self.ctx).into_string()
    }

    #[cfg(not(feature = "runtime-only"))]
    /// The module as binary IR (docs/format.md).
    pub fn to_binary(&self) -> Result<Blob> {
        let mut blob = ptr::null_mut();
        // SAFETY: live module; out-parameter.
        check(unsafe { sys::tri_module_to_binary(self.raw, &mut blob) })?;
        Ok(Blob::from_raw(blob, &self.ctx))
    }

    /// Every kernel and device function, in module order.
    pub fn functions(&self) -> Result<Vec<Function>> {
        let mut count = 0u32;
        // SAFETY: live module; out-parameter.
        check(unsafe { sys::tri_module_function_count(self.raw, &mut count) })?;
        (0..count).map(|i| self.function_at(i)).collect()
    }

    /// The function named `name` (without '@'); ErrorKind::NotFound when there is none.
    pub fn function(&self, name: &str) -> Result<Function> {
        let cname = cstring(name, "function name")?;
        let mut index = 0u32;
        // SAFETY: live module, NUL-terminated name, out-parameter.
        check(unsafe { sys::tri_module_find_function(self.raw, cname.as_ptr(), &mut index) })?;
        self.function_at(index)
    }

    fn function_at(&self, index: u32) -> Result<Function> {
        let m = self.raw;
        let mut name = ptr::null();
        let mut kind = 0i32;
        let mut count = 0u32;
        // SAFETY (this block and the loop): live module, index from the library, out-parameters;
        // the strings belong to the module and are copied before it can go away.
        unsafe {
            check(sys::tri_module_function_name(m, index, &mut name))?;
            check(sys::tri_module_function_kind(m, index, &mut kind))?;
            check(sys::tri_module_param_count(m, index, &mut count))?;
        }
        let mut params = Vec::with_capacity(count as usize);
        for p in 0..count {
            let (mut pname, mut pkind, mut tkind, mut dtype, mut text) = (ptr::null(), 0i32, 0i32, 0i32, ptr::null());
            let (mut align, mut divisible, mut noalias) = (0u32, 0u32, 0i32);
            let mut default = ptr::null();
            unsafe {
                check(sys::tri_module_param_name(m, index, p, &mut pname))?;
                check(sys::tri_module_param_kind(m, index, p, &mut pkind))?;
                check(sys::tri_module_param_type(m, index, p, &mut tkind, &mut dtype, &mut text))?;
                check(sys::tri_module_param_facts(m, index, p, &mut align, &mut divisible, &mut noalias))?;
                if pkind == sys::TRI_PARAM_CONSTEXPR {
                    check(sys::tri_module_param_default(m, index, p, &mut default))?;
                }
            }
            let dtype = DType::from_raw(dtype).ok_or_else(|| {
                Error::new(
                    sys::TRI_ERROR_UNSUPPORTED,
                    format!("parameter %{} has a type this crate does not know ({})", c_str(pname), c_str(text)),
                )
            })?;
            params.push(Param {
                name: c_str(pname),
                kind: if pkind == sys::TRI_PARAM_CONSTEXPR { ParamKind::Constexpr } else { ParamKind::Value },
                type_kind: match tkind {
                    sys::TRI_TYPE_POINTER => TypeKind::Pointer,
                    sys::TRI_TYPE_BLOCK => TypeKind::Block,
                    _ => TypeKind::Scalar,
                },
                dtype,
                type_text: c_str(text),
                align,
                divisible,
                noalias: noalias != 0,
                default: if default.is_null() { None } else { Some(c_str(default)) },
            });
        }
        Ok(Function {
            index,
            name: c_str(name),
            kind: if kind == sys::TRI_FUNCTION_DEVICE { FunctionKind::Device } else { FunctionKind::Kernel },
            params,
        })
    }

    #[cfg(not(feature = "runtime-only"))]
    /// Compiles kernel `name` with `options` (CompileOptions::new() for the defaults: the CPU).
    pub fn compile(&self, name: &str, options: &CompileOptions) -> Result<Kernel> {
        Kernel::compile(self, name, options)
    }
}
