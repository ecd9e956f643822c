// Tri's "cuda" target from Rust: device memory from the CUDA driver (libcuda.so.1, opened with
// dlopen: no crate, no CUDA toolkit), vector add and a fused row softmax queued on a
// non-blocking stream with device pointers, a prepared launch, each result copied back and
// checked against plain Rust. Without a driver or a device it prints "skipped: no CUDA device".
// `cargo run --example cuda_vector_add` runs it; `cargo test` runs it too (tests/gpu.rs).

use std::error::Error;

use tri::{Arg, CompileOptions, Context, DevicePtr, Module, Target};

/// The few CUDA driver calls the example needs, resolved at run time with dlopen/dlsym (glibc
/// has them in libc since 2.34, which std already links).
pub mod cuda {
    use std::ffi::{c_void, CStr, CString};
    use std::os::raw::{c_char, c_int, c_uint};

    extern "C" {
        fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        fn dlerror() -> *mut c_char;
    }
    const RTLD_NOW: c_int = 2;

    type CuResult = c_int;
    type CuStream = *mut c_void;
    type CuContext = *mut c_void;

    #[allow(non_snake_case)]
    struct Api {
        cuInit: unsafe extern "C" fn(c_uint) -> CuResult,
        cuDeviceGet: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
        cuDevicePrimaryCtxRetain: unsafe extern "C" fn(*mut CuContext, c_int) -> CuResult,
        cuDevicePrimaryCtxRelease_v2: unsafe extern "C" fn(c_int) -> CuResult,
        cuCtxPushCurrent_v2: unsafe extern "C" fn(CuContext) -> CuResult,
        cuCtxPopCurrent_v2: unsafe extern "C" fn(*mut CuContext) -> CuResult,
        cuMemAlloc_v2: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
        cuMemFree_v2: unsafe extern "C" fn(u64) -> CuResult,
        cuMemcpyHtoDAsync_v2: unsafe extern "C" fn(u64, *const c_void, usize, CuStream) -> CuResult,
        cuMemcpyDtoHAsync_v2: unsafe extern "C" fn(*mut c_void, u64, usize, CuStream) -> CuResult,
        cuStreamCreate: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
        cuStreamSynchronize: unsafe extern "C" fn(CuStream) -> CuResult,
        cuStreamDestroy_v2: unsafe extern "C" fn(CuStream) -> CuResult,
    }

    fn check(r: CuResult, what: &str) -> Result<(), String> {
        if r == 0 {
            Ok(())
        } else {
            Err(format!("{} failed with CUDA error {}", what, r))
        }
    }

    /// Device 0's primary context, current on the thread that opened it while this lives.
    pub struct Gpu {
        api: Api,
        device: c_int,
        ctx: CuContext,
    }

    /// A stream that does not synchronize with the legacy default stream.
    pub struct Stream<'g> {
        gpu: &'g Gpu,
        pub raw: CuStream,
    }

    /// Device memory of `bytes` bytes.
    pub struct Buffer<'g> {
        gpu: &'g Gpu,
        pub ptr: u64,
        pub bytes: usize,
    }

    impl Gpu {
        /// Ok(None) when there is no driver (libcuda.so.1 does not load) or no device.
        pub fn open() -> Result<Option<Gpu>, String> {
            // SAFETY: dlopen/dlsym with NUL-terminated names; each symbol is cast to the driver
            // API's documented signature for that versioned entry point.
            unsafe {
                let name = CString::new("libcuda.so.1").unwrap();
                let lib = dlopen(name.as_ptr(), RTLD_NOW);
                if lib.is_null() {
                    let why = dlerror();
                    let why =
                        if why.is_null() { String::new() } else { CStr::from_ptr(why).to_string_lossy().into_owned() };
                    eprintln!("libcuda.so.1 does not load: {}", why);
                    return Ok(None);
                }
                macro_rules! sym {
                    ($name:ident) => {{
                        let s = CString::new(stringify!($name)).unwrap();
                        let p = dlsym(lib, s.as_ptr());
                        if p.is_null() {
                            return Err(format!("libcuda.so.1 has no {}", stringify!($name)));
                        }
                        std::mem::transmute::<*mut c_void, _>(p)
                    }};
                }
                let api = Api {
                    cuInit: sym!(cuInit),
                    cuDeviceGet: sym!(cuDeviceGet),
                    cuDevicePrimaryCtxRetain: sym!(cuDevicePrimaryCtxRetain),
                    cuDevicePrimaryCtxRelease_v2: sym!(cuDevicePrimaryCtxRelease_v2),
                    cuCtxPushCurrent_v2: sym!(cuCtxPushCurrent_v2),
                    cuCtxPopCurrent_v2: sym!(cuCtxPopCurrent_v2),
                    cuMemAlloc_v2: sym!(cuMemAlloc_v2),
                    cuMemFree_v2: sym!(cuMemFree_v2),
                    cuMemcpyHtoDAsync_v2: sym!(cuMemcpyHtoDAsync_v2),
                    cuMemcpyDtoHAsync_v2: sym!(cuMemcpyDtoHAsync_v2),
                    cuStreamCreate: sym!(cuStreamCreate),
                    cuStreamSynchronize: sym!(cuStreamSynchronize),
                    cuStreamDestroy_v2: sym!(cuStreamDestroy_v2),
                };
                match (api.cuInit)(0) {
                    0 => {}
                    100 => return Ok(None), // CUDA_ERROR_NO_DEVICE
                    r => return Err(format!("cuInit failed with CUDA error {}", r)),
                }
                let mut device = 0;
                if (api.cuDeviceGet)(&mut device, 0) != 0 {
                    return Ok(None);
                }
                let mut ctx = std::ptr::null_mut();
                check((api.cuDevicePrimaryCtxRetain)(&mut ctx, device), "cuDevicePrimaryCtxRetain")?;
                check((api.cuCtxPushCurrent_v2)(ctx), "cuCtxPushCurrent")?;
                Ok(Some(Gpu { api, device, ctx }))
            }
        }

        pub fn stream(&self) -> Result<Stream<'_>, String> {
            let mut raw = std::ptr::null_mut();
            // SAFETY: the context is current; 1 is CU_STREAM_NON_BLOCKING.
            check(unsafe { (self.api.cuStreamCreate)(&mut raw, 1) }, "cuStreamCreate")?;
            Ok(Stream { gpu: self, raw })
        }

        pub fn alloc(&self, bytes: usize) -> Result<Buffer<'_>, String> {
            let mut ptr = 0u64;
            // SAFETY: the context is current; out-parameter.
            check(unsafe { (self.api.cuMemAlloc_v2)(&mut ptr, bytes.max(1)) }, "cuMemAlloc")?;
            Ok(Buffer { gpu: self, ptr, bytes })
        }
    }

    impl Drop for Gpu {
        fn drop(&mut self) {
            // SAFETY: the context pushed in open, popped once; the primary context released once.
            unsafe {
                let mut popped = std::ptr::null_mut();
                (self.api.cuCtxPopCurrent_v2)(&mut popped);
                debug_assert_eq!(popped, self.ctx);
                (self.api.cuDevicePrimaryCtxRelease_v2)(self.device);
            }
        }
    }

    impl Stream<'_> {
        /// Queues a copy of `src` into `dst` (at most dst.bytes).
        pub fn upload<T: Copy>(&self, dst: &Buffer, src: &[T]) -> Result<(), String> {
            let bytes = std::mem::size_of_val(src);
            assert!(bytes <= dst.bytes);
            // SAFETY: `src` is `bytes` long; the copy is complete before `synchronize` returns,
            // which callers do before dropping `src`.
            check(
                unsafe { (self.gpu.api.cuMemcpyHtoDAsync_v2)(dst.ptr, src.as_ptr() as *const c_void, bytes, self.raw) },
                "cuMemcpyHtoDAsync",
            )
        }

        /// Queues a copy of `src` into `dst` (dst.len() elements).
        pub fn download<T: Copy>(&self, dst: &mut [T], src: &Buffer) -> Result<(), String> {
            let bytes = std::mem::size_of_val(dst);
            assert!(bytes <= src.bytes);
            // SAFETY: as for upload; the caller synchronizes before reading `dst`.
            check(
                unsafe {
                    (self.gpu.api.cuMemcpyDtoHAsync_v2)(dst.as_mut_ptr() as *mut c_void, src.ptr, bytes, self.raw)
                },
                "cuMemcpyDtoHAsync",
            )
        }

        pub fn synchronize(&self) -> Result<(), String> {
            // SAFETY: a live stream.
            check(unsafe { (self.gpu.api.cuStreamSynchronize)(self.raw) }, "cuStreamSynchronize")
        }
    }

    impl Drop for Stream<'_> {
        fn drop(&mut self) {
            // SAFETY: made by cuStreamCreate, destroyed once (after its work, by the driver).
            unsafe { (self.gpu.api.cuStreamDestroy_v2)(self.raw) };
        }
    }

    impl Drop for Buffer<'_> {
        fn drop(&mut self) {
            // SAFETY: made by cuMemAlloc, freed once; callers synchronize before dropping.
            unsafe { (self.gpu.api.cuMemFree_v2)(self.ptr) };
        }
    }
}

const VECTOR_ADD: &str = include_str!("../kernels/vector_add.tri");
const SOFTMAX: &str = include_str!("../kernels/softmax.tri");

fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 16.0 - 8.0
        })
        .collect()
}

/// Runs the example; Ok(false) when it was skipped (no driver or no device).
pub fn run() -> Result<bool, Box<dyn Error>> {
    let ctx = Context::new()?;
    match ctx.device_count() {
        Ok(n) if n > 0 => {}
        _ => {
            println!("skipped: no CUDA device");
            return Ok(false);
        }
    }
    let gpu = match cuda::Gpu::open()? {
        Some(gpu) => gpu,
        None => {
            println!("skipped: no CUDA device");
            return Ok(false);
        }
    };
    let device = ctx.device(0)?;
    println!("device 0: {} ({}, {} SMs)", device.name, device.arch(), device.sm_count);

    // Vector add: the arch is the current device's when none is named.
    let add = Module::new(&ctx, VECTOR_ADD.as_bytes(), "vector_add.tri")?
        .compile("vector_add", &CompileOptions::builder().target(Target::Cuda).num_warps(4).build()?)?;
    let n = 1_000_003usize;
    let (x, y) = (inputs(n, 1), inputs(n, 2));
    let stream = gpu.stream()?;
    let (dx, dy, dout, dout2) = (gpu.alloc(n * 4)?, gpu.alloc(n * 4)?, gpu.alloc(n * 4)?, gpu.alloc(n * 4)?);
    stream.upload(&dx, &x)?;
    stream.upload(&dy, &y)?;
    let grid = ((n + 1023) / 1024) as u32;
    let args = [
        Arg::device::<f32>(DevicePtr(dx.ptr), n),
        Arg::device::<f32>(DevicePtr(dy.ptr), n),
        Arg::device::<f32>(DevicePtr(dout.ptr), n),
        Arg::i32(n as i32),
    ];
    // SAFETY: each buffer holds n f32s and lives until the stream is synchronized below.
    unsafe { add.launch_on(stream.raw, grid, &args)? };
    // A prepared launch: x + x into the second output.
    let mut plan = add.plan_on(stream.raw, grid, &args)?;
    plan.set_arg(1, Arg::device::<f32>(DevicePtr(dx.ptr), n))?;
    plan.set_arg(2, Arg::device::<f32>(DevicePtr(dout2.ptr), n))?;
    unsafe { plan.launch()? };
    let (mut out, mut out2) = (vec![0.0f32; n], vec![0.0f32; n]);
    stream.download(&mut out, &dout)?;
    stream.download(&mut out2, &dout2)?;
    stream.synchronize()?;
    for i in 0..n {
        if out[i] != x[i] + y[i] || out2[i] != x[i] + x[i] {
            return Err(format!(
                "vector_add: out[{}] = {} / {}, expected {} / {}",
                i,
                out[i],
                out2[i],
                x[i] + y[i],
                x[i] + x[i]
            )
            .into());
        }
    }
    println!("vector_add (cuda): {} elements match Rust, launched and through a plan", n);

    // Softmax: one program per row of 1000 columns.
    let softmax = Module::new(&ctx, SOFTMAX.as_bytes(), "softmax.tri")?.compile(
        "softmax",
        &CompileOptions::builder().target(Target::Cuda).num_warps(8).constexpr_int("BLOCK", 1024).build()?,
    )?;
    let (rows, cols) = (300usize, 1000usize);
    let xs = inputs(rows * cols, 3);
    let (din, dprobs) = (gpu.alloc(rows * cols * 4)?, gpu.alloc(rows * cols * 4)?);
    stream.upload(&din, &xs)?;
    let c = cols as i32;
    // SAFETY: rows x cols f32s in each buffer, alive until the synchronization.
    unsafe {
        softmax.launch_on(
            stream.raw,
            rows as u32,
            &[
                Arg::device::<f32>(DevicePtr(dprobs.ptr), rows * cols),
                Arg::device::<f32>(DevicePtr(din.ptr), rows * cols),
                Arg::i32(c),
                Arg::i32(c),
                Arg::i32(c),
            ],
        )?
    };
    let mut probs = vec![0.0f32; rows * cols];
    stream.download(&mut probs, &dprobs)?;
    stream.synchronize()?;
    for r in 0..rows {
        let row = &xs[r * cols..(r + 1) * cols];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        for col in 0..cols {
            let want = (row[col] as f64 - max).exp() / sum;
            let got = probs[r * cols + col] as f64;
            if (got - want).abs() > 1e-6 + 1e-5 * want {
                return Err(format!("softmax: out[{}][{}] = {}, expected {}", r, col, got, want).into());
            }
        }
    }
    println!("softmax (cuda): {} x {} matches Rust", rows, cols);
    println!("launch-time variants of vector_add: {}", add.variants()?);
    Ok(true)
}

#[allow(dead_code)] // the test includes this file for run() alone
fn main() {
    if let Err(e) = run() {
        eprintln!("error: {}", e);
        std::process::exit(1);
    }
}
