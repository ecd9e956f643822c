// Host cost of one launch from Rust (bench/launch/run.py runs it next to the other languages): a
// 4-argument vector add of 1024 elements on one program (examples/vector_add.tri), in batches of
// --batch launches, the methods taking turns for --rounds rounds, each reporting its median round
// per launch. On "cuda" the GPU drains between batches, untimed.
//
// Methods: `kernel.launch_on(stream, 1, &[Arg::device(..), .., Arg::i32(n)])` (the direct call:
// checked against the signature), `plan.launch()`, tri_launch through tri-sys with the arguments
// built once (the floor under the safe crate), an empty FFI call (tri_version), and on "cuda" a
// raw cuLaunchKernel of the kernel's own PTX, resolved with dlopen (TRI_LIBCUDA, as libtri finds
// the driver, else libcuda.so.1; tests/target/cuda/fake_libcuda.c stands in without a GPU).
//
// usage: tri-launch-bench-rust [--target cuda|cpu] [--kernel examples/vector_add.tri]
//                              [--batch 1000] [--rounds 31]
// Prints one JSON object {"language": "rust", "target": ..., "rows": [...]}.

use std::ffi::{c_void, CString};
use std::os::raw::{c_char, c_int, c_uint};
use std::time::Instant;

use tri::{sys, Arg, CompileOptions, Context, DType, DevicePtr, Module, Target};

const N: usize = 1024;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

#[allow(non_snake_case)]
struct Cuda {
    cuCtxSynchronize: unsafe extern "C" fn() -> c_int,
    cuMemAlloc_v2: unsafe extern "C" fn(*mut u64, usize) -> c_int,
    cuModuleLoadDataEx: unsafe extern "C" fn(*mut *mut c_void, *const c_void, c_uint, *mut c_void, *mut c_void) -> c_int,
    cuModuleGetFunction: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int,
    cuLaunchKernel: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> c_int,
}

/// Device 0's primary context made current; None without a driver or a device.
fn open_cuda() -> Option<Cuda> {
    let name = std::env::var("TRI_LIBCUDA").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "libcuda.so.1".into());
    let cname = CString::new(name).ok()?;
    // SAFETY: dlopen/dlsym with NUL-terminated names; each symbol is cast to the driver API's
    // documented signature of that entry point.
    unsafe {
        let h = dlopen(cname.as_ptr(), 2);
        if h.is_null() {
            return None;
        }
        let sym = |s: &str| {
            let c = CString::new(s).unwrap();
            let p = dlsym(h, c.as_ptr());
            assert!(!p.is_null(), "the CUDA driver has no {}", s);
            p
        };
        let init: unsafe extern "C" fn(c_uint) -> c_int = std::mem::transmute(sym("cuInit"));
        let device_get: unsafe extern "C" fn(*mut c_int, c_int) -> c_int = std::mem::transmute(sym("cuDeviceGet"));
        let retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int =
            std::mem::transmute(sym("cuDevicePrimaryCtxRetain"));
        let set_current: unsafe extern "C" fn(*mut c_void) -> c_int = std::mem::transmute(sym("cuCtxSetCurrent"));
        let (mut dev, mut ctx) = (0, std::ptr::null_mut());
        if init(0) != 0 || device_get(&mut dev, 0) != 0 || retain(&mut ctx, dev) != 0 || set_current(ctx) != 0 {
            return None;
        }
        Some(Cuda {
            cuCtxSynchronize: std::mem::transmute(sym("cuCtxSynchronize")),
            cuMemAlloc_v2: std::mem::transmute(sym("cuMemAlloc_v2")),
            cuModuleLoadDataEx: std::mem::transmute(sym("cuModuleLoadDataEx")),
            cuModuleGetFunction: std::mem::transmute(sym("cuModuleGetFunction")),
            cuLaunchKernel: std::mem::transmute(sym("cuLaunchKernel")),
        })
    }
}

fn check(r: c_int, what: &str) {
    assert_eq!(r, 0, "{} failed with CUDA error {}", what, r);
}

/// The median round of each method, per launch, in microseconds.
fn measure(methods: &mut [(&str, Box<dyn FnMut() + '_>)], batch: usize, rounds: usize, sync: &dyn Fn()) -> Vec<f64> {
    for (_, f) in methods.iter_mut() {
        for _ in 0..batch {
            f();
        }
    }
    sync();
    let mut t = vec![Vec::with_capacity(rounds); methods.len()];
    for _ in 0..rounds {
        for (m, (_, f)) in methods.iter_mut().enumerate() {
            let t0 = Instant::now();
            for _ in 0..batch {
                f();
            }
            let us = t0.elapsed().as_secs_f64() * 1e6 / batch as f64;
            sync();
            t[m].push(us);
        }
    }
    t.into_iter()
        .map(|mut v| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        })
        .collect()
}

fn arg_value<'a>(args: &'a [String], name: &str, default: &'a str) -> &'a str {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(|s| s.as_str()).unwrap_or(default)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let target = arg_value(&argv, "--target", "cuda").to_string();
    let kernel_path = arg_value(&argv, "--kernel", "examples/vector_add.tri").to_string();
    let batch: usize = arg_value(&argv, "--batch", "1000").parse().unwrap();
    let rounds: usize = arg_value(&argv, "--rounds", "31").parse().unwrap();
    let cuda_target = target == "cuda";
    let cu = if cuda_target {
        match open_cuda() {
            Some(c) => Some(c),
            None => {
                println!("skipped: no CUDA device");
                return;
            }
        }
    } else {
        None
    };
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::from_file(&ctx, &kernel_path).unwrap();
    let opts = CompileOptions::builder()
        .target(if cuda_target { Target::Cuda } else { Target::Cpu })
        .constexpr_int("BLOCK", N as i64)
        .build()
        .unwrap();
    let kernel = module.compile("vector_add", &opts).unwrap();
    let x = vec![1.0f32; N];
    let mut out = vec![0.0f32; N];
    let base = match &cu {
        Some(c) => {
            let mut p = 0u64;
            // SAFETY: a current context; an out-parameter.
            check(unsafe { (c.cuMemAlloc_v2)(&mut p, 3 * 4 * N) }, "cuMemAlloc");
            p
        }
        None => 0,
    };
    let out_ptr = out.as_mut_ptr();
    let dev = |i: u64| DevicePtr(base + i * 4 * N as u64);
    let stream: tri::Stream = std::ptr::null_mut();
    // The arguments of the direct call and the plan, as a program would write them.
    let make_args = || -> Vec<Arg<'_>> {
        if cuda_target {
            vec![Arg::device::<f32>(dev(0), N), Arg::device::<f32>(dev(1), N), Arg::device::<f32>(dev(2), N), Arg::i32(N as i32)]
        } else {
            // SAFETY: x and out outlive every launch below; vector_add writes only out.
            unsafe {
                vec![
                    Arg::from_raw_parts(x.as_ptr() as *const c_void, (4 * N) as u64, DType::F32),
                    Arg::from_raw_parts(x.as_ptr() as *const c_void, (4 * N) as u64, DType::F32),
                    Arg::from_raw_parts(out_ptr as *const c_void, (4 * N) as u64, DType::F32),
                    Arg::i32(N as i32),
                ]
            }
        }
    };
    let args = make_args();
    // SAFETY: vector_add stays within the 1024 elements of each buffer.
    unsafe { kernel.launch_on(stream, 1, &args) }.unwrap();
    if !cuda_target {
        // SAFETY: the launch has finished (host targets return when it has).
        assert_eq!(unsafe { *out_ptr.add(N - 1) }, 2.0, "vector_add is wrong");
    }
    let mut plan = kernel.plan_on(stream, 1, &args).unwrap();
    let raw_args: Vec<sys::tri_arg> = args.iter().map(|a| *a.as_raw()).collect();
    let k = kernel.as_raw();
    // The raw launch: the same PTX, loaded by hand, with its parameters built once.
    let mut bits: [u64; 4] = [dev(0).0, dev(1).0, dev(2).0, N as u64];
    let mut params: Vec<*mut c_void> = bits.iter_mut().map(|b| b as *mut u64 as *mut c_void).collect();
    let mut func: *mut c_void = std::ptr::null_mut();
    let mut block = 0u32;
    if let Some(c) = &cu {
        let ptx = CString::new(kernel.code("ptx").unwrap()).unwrap();
        let meta = kernel.code("metadata").unwrap();
        let at = meta.find("\"block\": [").expect("no block in the launch descriptor") + 10;
        block = meta[at..].split(|ch: char| !ch.is_ascii_digit()).next().unwrap().parse().unwrap();
        let mut m = std::ptr::null_mut();
        let entry = CString::new("vector_add").unwrap();
        // SAFETY: NUL-terminated PTX and name; out-parameters.
        unsafe {
            check((c.cuModuleLoadDataEx)(&mut m, ptx.as_ptr() as *const c_void, 0, std::ptr::null_mut(), std::ptr::null_mut()), "cuModuleLoadDataEx");
            check((c.cuModuleGetFunction)(&mut func, m, entry.as_ptr()), "cuModuleGetFunction");
        }
    }
    let sync = || {
        if let Some(c) = &cu {
            // SAFETY: a current context.
            unsafe { (c.cuCtxSynchronize)() };
        }
    };
    let mut methods: Vec<(&str, Box<dyn FnMut()>)> = Vec::new();
    if let Some(c) = &cu {
        let launch = c.cuLaunchKernel;
        let p = params.as_mut_ptr();
        // SAFETY: a loaded function and parameters that outlive the benchmark.
        methods.push(("raw", Box::new(move || unsafe {
            launch(func, 1, 1, 1, block, 1, 1, 0, std::ptr::null_mut(), p, std::ptr::null_mut());
        })));
    }
    // SAFETY (the three below): the arguments describe live buffers the kernel stays within.
    methods.push(("floor", Box::new(|| unsafe {
        sys::tri_launch(k, 1, 1, 1, stream, raw_args.as_ptr(), raw_args.len() as u32);
    })));
    methods.push(("call", Box::new(|| unsafe {
        kernel.launch_on(stream, 1, &args).unwrap();
    })));
    methods.push(("plan", Box::new(|| unsafe {
        plan.launch().unwrap();
    })));
    let mut sink = 0u32;
    let sink_ptr: *mut u32 = &mut sink;
    // SAFETY: tri_version takes nothing and reads nothing; the volatile store keeps the call.
    methods.push(("ffi", Box::new(move || unsafe {
        std::ptr::write_volatile(sink_ptr, sys::tri_version());
    })));
    let t = measure(&mut methods, batch, rounds, &sync);
    let get = |name: &str| t[methods.iter().position(|(n, _)| *n == name).unwrap()];
    let raw = if cuda_target { get("raw") } else { get("floor") };
    let row = |what: &str, us: f64| {
        format!(
            "{{\"workload\": \"launch rust {}\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": {:.3}, \
             \"raw\": {:.3}, \"floor\": {:.3}, \"ffi_call\": {:.3}}}",
            what,
            us,
            raw,
            get("floor"),
            get("ffi")
        )
    };
    println!(
        "{{\"language\": \"rust\", \"target\": \"{}\", \"rows\": [\n {},\n {}\n]}}",
        target,
        row("call", get("call")),
        row("plan", get("plan"))
    );
}
