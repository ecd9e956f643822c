// The safe API's contract: every C error arrives as an Error with its code and message,
// arguments are checked against the kernel's signature, handles drop in any order, the log
// sink and the allocator are called and outlive the C objects, and contexts, modules and
// kernels are shared across threads.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tri::{
    Arg, CompileOptions, Context, DType, ErrorKind, FunctionKind, HostAllocator, Kernel, LogLevel, Module, ParamKind,
    Target, TypeKind,
};

fn example(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels").join(name)
}

fn vector_add(ctx: &Context, options: &CompileOptions) -> Kernel {
    Module::from_file(ctx, example("vector_add.tri")).unwrap().compile("vector_add", options).unwrap()
}

fn add(kernel: &Kernel, x: &[f32], y: &[f32]) -> tri::Result<Vec<f32>> {
    let mut out = vec![0.0f32; x.len()];
    let grid = ((x.len() + 1023) / 1024) as u32;
    // SAFETY: vector_add stays within x.len() elements of each buffer.
    unsafe {
        kernel.launch(grid, &[Arg::slice(x), Arg::slice(y), Arg::slice_mut(&mut out), Arg::i32(x.len() as i32)])?
    };
    Ok(out)
}

#[test]
fn version_matches_the_header() {
    let (major, minor, _) = tri::version();
    assert_eq!(major, tri::sys::TRI_VERSION_MAJOR);
    assert!(minor >= tri::sys::TRI_VERSION_MINOR);
}

#[test]
fn parse_errors_carry_code_place_and_message() {
    let ctx = Context::new().unwrap();
    let err = Module::new(&ctx, b"kernel @k() {\n  bogus\n}\n", "bad.tri").err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Parse);
    assert_eq!(err.code(), tri::sys::TRI_ERROR_PARSE);
    assert_eq!(err.code_name(), "TRI_ERROR_PARSE");
    assert!(err.message().starts_with("bad.tri:2:"), "{}", err);
    let empty = Module::new(&ctx, b"", "empty.tri").err().unwrap();
    assert_eq!(empty.kind(), ErrorKind::InvalidArgument);
    let missing = Module::from_file(&ctx, "/nonexistent/k.tri").err().unwrap();
    assert_eq!(missing.kind(), ErrorKind::Io);
    assert!(missing.message().contains("/nonexistent/k.tri"), "{}", missing);
}

#[test]
fn reflection_reports_the_signature() {
    let ctx = Context::new().unwrap();
    let module = Module::from_file(&ctx, example("softmax.tri")).unwrap();
    let functions = module.functions().unwrap();
    assert_eq!(functions.len(), 1);
    let f = module.function("softmax").unwrap();
    assert_eq!(f, functions[0]);
    assert_eq!(f.kind, FunctionKind::Kernel);
    let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["out", "in", "in_row_stride", "out_row_stride", "n_cols", "BLOCK"]);
    assert_eq!(f.params[0].type_kind, TypeKind::Pointer);
    assert_eq!(f.params[0].dtype, DType::F32);
    assert_eq!(f.params[0].type_text, "ptr<f32>");
    assert_eq!(f.params[2].type_kind, TypeKind::Scalar);
    assert_eq!(f.params[2].dtype, DType::I32);
    assert_eq!(f.params[5].kind, ParamKind::Constexpr);
    assert_eq!(f.params[5].default.as_deref(), Some("1024"));
    assert_eq!(f.params[0].default, None);
    assert_eq!(module.function("nope").err().unwrap().kind(), ErrorKind::NotFound);
}

#[test]
fn text_and_binary_round_trip() {
    let ctx = Context::new().unwrap();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let text = module.to_text().unwrap();
    assert!(text.contains("kernel @vector_add"));
    let binary = module.to_binary().unwrap();
    drop(module);
    let again = Module::new(&ctx, &binary, "vector_add.trib").unwrap();
    assert_eq!(again.to_text().unwrap(), text);
    assert_eq!(&again.to_binary().unwrap()[..], &binary[..]);
}

#[test]
fn compile_errors() {
    let ctx = Context::new().unwrap();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let bad_target = CompileOptions::builder().target_name("tpu").build().err().unwrap();
    assert_eq!(bad_target.kind(), ErrorKind::InvalidArgument);
    let not_pow2 = CompileOptions::builder().constexpr_int("BLOCK", 24).build().unwrap();
    let err = module.compile("vector_add", &not_pow2).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Specialize);
    assert!(err.message().contains("BLOCK"), "{}", err);
    let checked_cpu = CompileOptions::builder().target(Target::Cpu).checked(true).build().unwrap();
    assert_eq!(module.compile("vector_add", &checked_cpu).err().unwrap().kind(), ErrorKind::Unsupported);
    let err = module.compile("vector_sub", &CompileOptions::new().unwrap()).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let nul = CompileOptions::builder().constexpr_int("BL\0CK", 1).build().err().unwrap();
    assert_eq!(nul.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn the_kernel_text_is_specialized() {
    let ctx = Context::new().unwrap();
    let options =
        CompileOptions::builder().constexpr_int("BLOCK", 256).arg_align(0, 16).arg_divisible(3, 16).build().unwrap();
    let kernel = vector_add(&ctx, &options);
    assert_eq!(kernel.arg_count(), 4);
    assert_eq!(kernel.name(), "vector_add");
    assert!(kernel.to_text().unwrap().contains("256"));
}

#[test]
fn arguments_are_checked_against_the_signature() {
    let ctx = Context::new().unwrap();
    let kernel = vector_add(&ctx, &CompileOptions::new().unwrap());
    let x = vec![1.0f32; 8];
    let mut out = vec![0.0f32; 8];
    // SAFETY (all launches here): refused before the call, or within 8 elements.
    let few = unsafe { kernel.launch(1, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out)]) }.err().unwrap();
    assert_eq!(few.kind(), ErrorKind::LaunchArgs);
    assert!(
        few.message()
            .contains("takes 4 arguments (%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32), but 3 were given"),
        "{}",
        few
    );
    let scalar = unsafe { kernel.launch(1, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i64(8)]) }
        .err()
        .unwrap();
    assert!(scalar.message().contains("argument 3 (%n) of kernel @vector_add is i32"), "{}", scalar);
    assert!(scalar.message().contains("but a i64 value was given"), "{}", scalar);
    let value_for_pointer =
        unsafe { kernel.launch(1, &[Arg::f32(1.0), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(8)]) }
            .err()
            .unwrap();
    assert!(value_for_pointer.message().contains("argument 0 (%x)"), "{}", value_for_pointer);
    // The library's own checks come through with its message: a grid past its limits.
    let zero =
        unsafe { kernel.launch((1, 65536, 1), &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(8)]) }
            .err()
            .unwrap();
    assert_eq!(zero.kind(), ErrorKind::InvalidArgument);
    assert!(!zero.message().is_empty());
    assert_eq!(add(&kernel, &x, &x).unwrap(), vec![2.0f32; 8]);
}

#[test]
fn raw_parts_reach_the_kernel() {
    let ctx = Context::new().unwrap();
    let kernel = vector_add(&ctx, &CompileOptions::new().unwrap());
    let x = vec![1.5f32; 100];
    let mut out = vec![0.0f32; 100];
    let p = out.as_mut_ptr() as *const std::ffi::c_void;
    // SAFETY: `out` outlives the launch and the kernel writes 100 elements.
    unsafe {
        let raw = Arg::from_raw_parts(p, 400, DType::F32);
        kernel.launch(1, &[Arg::slice(&x), Arg::slice(&x), raw, Arg::i32(100)]).unwrap();
    }
    assert!(out.iter().all(|&v| v == 3.0));
}

#[test]
fn handles_drop_in_any_order() {
    let ctx = Context::new().unwrap();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let kernel = module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap();
    let binary = module.to_binary().unwrap();
    drop(module);
    drop(ctx);
    assert_eq!(add(&kernel, &[1.0, 2.0], &[3.0, 4.0]).unwrap(), vec![4.0, 6.0]);
    drop(kernel);
    assert!(!binary.is_empty());
}

#[test]
fn the_log_sink_hears_failures() {
    let heard: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = heard.clone();
    let ctx = Context::builder()
        .log(LogLevel::Debug, move |level, msg| sink.lock().unwrap().push((level, msg.to_string())))
        .cache_dir(std::env::temp_dir())
        .build()
        .unwrap();
    assert!(Module::new(&ctx, b"kernel @k(", "broken.tri").is_err());
    let heard = heard.lock().unwrap();
    assert!(heard.iter().any(|(l, m)| *l == LogLevel::Error && m.contains("broken.tri:1:")), "{:?}", heard);
}

/// Counts live allocations so the test can see every one come back.
struct Counting {
    live: Mutex<HashMap<usize, std::alloc::Layout>>,
    total: AtomicUsize,
}

// SAFETY: alloc hands out System memory of the asked size and alignment; free returns it with
// the layout recorded at alloc.
unsafe impl HostAllocator for Counting {
    fn alloc(&self, size: usize, align: usize) -> *mut u8 {
        let layout = std::alloc::Layout::from_size_align(size.max(1), align).unwrap();
        // SAFETY: non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        self.live.lock().unwrap().insert(p as usize, layout);
        self.total.fetch_add(1, Ordering::SeqCst);
        p
    }
    unsafe fn free(&self, ptr: *mut u8, _size: usize) {
        let layout = self.live.lock().unwrap().remove(&(ptr as usize)).expect("free of a pointer alloc never gave");
        std::alloc::dealloc(ptr, layout);
    }
}

#[test]
fn the_allocator_sees_every_handle_come_and_go() {
    let counting = Arc::new(Counting { live: Mutex::default(), total: AtomicUsize::new(0) });
    {
        let ctx = Context::builder().allocator(counting.clone()).build().unwrap();
        let kernel = vector_add(&ctx, &CompileOptions::new().unwrap());
        assert_eq!(add(&kernel, &[1.0], &[1.0]).unwrap(), vec![2.0]);
        assert!(counting.total.load(Ordering::SeqCst) >= 2); // the context and the module at least
    }
    assert!(counting.live.lock().unwrap().is_empty());
}

#[test]
fn kernels_and_modules_are_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<Module>();
    send_sync::<Kernel>();
    send_sync::<tri::Blob>();
    fn send<T: Send>() {}
    send::<CompileOptions>();

    let ctx = Context::new().unwrap();
    let module = Arc::new(Module::from_file(&ctx, example("vector_add.tri")).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let module = module.clone();
            std::thread::spawn(move || {
                // Each thread compiles (one specialization, compiled once) and launches.
                let kernel = module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap();
                for round in 0..5 {
                    let x: Vec<f32> = (0..5000).map(|i| (i * (t + 1) + round) as f32).collect();
                    let out = add(&kernel, &x, &x).unwrap();
                    assert!(out.iter().zip(&x).all(|(o, v)| *o == 2.0 * v));
                }
                // Errors are per thread: this thread's failure is its own message.
                let err = module.function(&format!("missing{}", t)).err().unwrap();
                assert!(err.message().contains(&format!("missing{}", t)), "{}", err);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn tri_arg_is_the_frozen_24_bytes() {
    assert_eq!(std::mem::size_of::<tri::sys::tri_arg>(), 24);
    assert_eq!(std::mem::align_of::<tri::sys::tri_arg>(), 8);
}
