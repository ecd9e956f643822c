// The 0.2 context and kernel on the CPU: cancel, the interpreter's memory budget, the in-memory
// kernel cache's capacity, the disk cache in a temporary folder, module text with comments,
// GPU compile options and the code they make (PTX for a named architecture needs no GPU),
// launch-time variants on the CPU, and device queries and "cuda" launches where no driver can
// be loaded (checked in a child process whose TRI_LIBCUDA names a missing file).

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tri::{Arg, CacheStat, CompileOptions, Context, DType, DevicePtr, ErrorKind, Module, Target};

fn example(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels").join(name)
}

/// A fresh folder under the system's temporary directory.
fn temp_dir(what: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "tri-rs-{}-{}-{}-{}",
        what,
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn no_cache() -> Context {
    Context::builder().cache_dir("").build().unwrap()
}

fn options(target: Target) -> CompileOptions {
    CompileOptions::builder().target(target).build().unwrap()
}

const SPIN: &str = r#"
// while (i >= 0) i += n: never ends for n = 0.
kernel @spin(%out: ptr<i32>, %n: i32) {
  %c0 = const[value=0] : i32
  %w = while %c0 {
  ^(%i: i32):
    %more = cmp[pred=sge] %i, %c0 : i1
    condition %more, %i
  } {
  ^(%i2: i32):
    %next = add %i2, %n : i32
    yield %next
  } : i32
  store %out, %w
  return
}
"#;

#[test]
fn cancel_stops_a_launch_that_never_ends() {
    for target in [Target::Cpu, Target::Interp] {
        let ctx = no_cache();
        let kernel = Arc::new(
            Module::new(&ctx, SPIN.as_bytes(), "spin.tri").unwrap().compile("spin", &options(target)).unwrap(),
        );
        // Not a scoped thread: if cancel failed to stop the launch, the test fails rather than waits.
        let (k, (tx, rx)) = (kernel.clone(), mpsc::channel());
        std::thread::spawn(move || {
            let mut out = [0i32; 1];
            // SAFETY: spin writes out[0] only.
            let _ = tx.send(unsafe { k.launch(4, &[Arg::slice_mut(&mut out), Arg::i32(0)]) });
        });
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "the launch ended by itself");
        ctx.cancel().unwrap();
        let e = rx.recv_timeout(Duration::from_secs(60)).expect("cancel did not stop the launch").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Cancelled, "{}", e);
        assert_eq!(e.code_name(), "TRI_ERROR_CANCELLED");
        assert!(e.message().contains("cancel"), "{}", e);
        // Launches after the cancel run normally.
        let mut out = [0i32; 1];
        // SAFETY: as above; n = -1 ends the loop at once.
        unsafe { kernel.launch(1, &[Arg::slice_mut(&mut out), Arg::i32(-1)]).unwrap() };
        assert_eq!(out[0], -1);
    }
}

#[test]
fn the_interpreter_keeps_to_its_memory_budget() {
    let x = vec![1.0f32; 4096];
    let mut out = vec![0.0f32; 4096];
    let ctx = Context::builder().cache_dir("").interp_memory_limit(1000).build().unwrap();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let interp = module.compile("vector_add", &options(Target::Interp)).unwrap();
    // SAFETY: vector_add stays within 4096 elements.
    let e = unsafe { interp.launch(4, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(4096)]) }
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{}", e);
    assert!(e.message().contains("1000"), "{}", e);
    assert!(out.iter().all(|&v| v == 0.0)); // refused before running
    let cpu = module.compile("vector_add", &options(Target::Cpu)).unwrap(); // other targets ignore it
    unsafe { cpu.launch(4, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(4096)]).unwrap() };
    assert!(out.iter().all(|&v| v == 2.0));
}

/// Compiles vector_add, drops it, compiles it again: the disk cache's counters tell whether the
/// second compile found the module's in-memory copy or went to the disk.
fn compile_twice(capacity: Option<u32>) -> tri::CacheStats {
    let mut b = Context::builder().cache_dir(temp_dir("capacity"));
    if let Some(n) = capacity {
        b = b.kernel_cache_capacity(n);
    }
    let ctx = b.build().unwrap();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    drop(module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap());
    drop(module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap());
    ctx.cache_stats().unwrap()
}

#[test]
fn the_kernel_cache_capacity_decides_what_a_module_keeps() {
    let kept = compile_twice(None);
    assert_eq!((kept.misses, kept.stores, kept.hits), (1, 1, 0), "{:?}", kept);
    let dropped = compile_twice(Some(0));
    assert_eq!((dropped.misses, dropped.stores, dropped.hits), (1, 1, 1), "{:?}", dropped);
}

#[test]
fn the_disk_cache_round_trip() {
    let dir = temp_dir("cache");
    let (folder, bundle) = (dir.join("cache"), dir.join("warm.tribundle"));
    let x: Vec<f32> = (0..3000).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 3000];
    let ctx = Context::builder().cache_dir(&folder).cache_max_bytes(1 << 30).build().unwrap();
    assert_eq!(ctx.cache_dir().unwrap(), Some(folder.clone()));
    let kernel = Module::from_file(&ctx, example("vector_add.tri"))
        .unwrap()
        .compile("vector_add", &CompileOptions::new().unwrap())
        .unwrap();
    // SAFETY: within 3000 elements.
    unsafe { kernel.launch(3, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(3000)]).unwrap() };
    let s = ctx.cache_stats().unwrap();
    assert_eq!((s.misses, s.stores, s.hits, s.entries, s.max_bytes, s.enabled), (1, 1, 0, 1, 1 << 30, true), "{:?}", s);
    assert!(s.bytes > 0 && s.bytes_written == s.bytes, "{:?}", s);
    assert_eq!(ctx.cache_stat(CacheStat::Entries).unwrap(), 1);
    let entries = ctx.cache_list(false).unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert!(e.is_ok() && e.status == "ok" && e.key.len() == 32, "{:?}", e);
    assert_eq!((e.kind.as_str(), e.target.as_str(), e.kernel.as_str(), e.bytes), ("obj", "cpu", "vector_add", s.bytes));
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    assert!(e.last_use.abs_diff(now) < 3600 && !e.made_for.is_empty(), "{:?}", e);
    assert_eq!(e.specialized, "-", "{:?}", e); // the defaults: no constexpr set, no facts
    assert_eq!(ctx.cache_list(true).unwrap(), entries);
    assert_eq!(ctx.cache_export(&bundle).unwrap(), 1);
    assert!(std::fs::metadata(&bundle).unwrap().len() > 0);
    assert_eq!(ctx.cache_prune(None).unwrap(), 0); // within the bound
    assert_eq!(ctx.cache_prune(Some(0)).unwrap(), 1); // 0 empties it
    assert!(ctx.cache_list(false).unwrap().is_empty());
    assert_eq!(ctx.cache_stats().unwrap().evictions, 1);
    assert_eq!(ctx.cache_import(&bundle).unwrap(), 1);
    assert_eq!(ctx.cache_list(false).unwrap()[0].key, e.key);
    // A new context (as a new process would) finds the imported entry: a hit, nothing compiled.
    let again = Context::builder().cache_dir(&folder).build().unwrap();
    let kernel = Module::from_file(&again, example("vector_add.tri"))
        .unwrap()
        .compile("vector_add", &CompileOptions::new().unwrap())
        .unwrap();
    out.fill(0.0);
    unsafe { kernel.launch(3, &[Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(3000)]).unwrap() };
    assert!(out.iter().zip(&x).all(|(o, v)| *o == 2.0 * v));
    let s = again.cache_stats().unwrap();
    assert_eq!((s.hits, s.misses, s.bytes_read), (1, 0, e.bytes), "{:?}", s);
    assert_eq!(again.cache_import(dir.join("missing")).unwrap_err().kind(), ErrorKind::Io);
    std::fs::write(dir.join("junk"), b"not a bundle at all").unwrap();
    assert_eq!(again.cache_import(dir.join("junk")).unwrap_err().kind(), ErrorKind::CorruptBinary);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_context_without_a_disk_cache() {
    let ctx = no_cache();
    assert_eq!(ctx.cache_dir().unwrap(), None);
    Module::from_file(&ctx, example("vector_add.tri"))
        .unwrap()
        .compile("vector_add", &CompileOptions::new().unwrap())
        .unwrap();
    let s = ctx.cache_stats().unwrap();
    assert!(!s.enabled && s.stores == 0, "{:?}", s);
    assert_eq!(ctx.cache_list(false).unwrap_err().kind(), ErrorKind::Unsupported);
    assert_eq!(
        ctx.cache_export(std::env::temp_dir().join("never-written")).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
}

#[test]
fn module_text_with_its_comments() {
    let ctx = no_cache();
    let source = format!("// Spins until cancelled.\n{}", SPIN);
    let module = Module::new(&ctx, source.as_bytes(), "spin.tri").unwrap();
    let (plain, commented) = (module.to_text().unwrap(), module.to_text_with_comments().unwrap());
    assert!(!plain.contains("//"));
    assert!(commented.contains("// Spins until cancelled.") && commented.contains("// while (i >= 0) i += n"));
    let again = Module::new(&ctx, commented.as_bytes(), "again.tri").unwrap();
    assert_eq!(again.to_text_with_comments().unwrap(), commented);
    let binary = Module::new(&ctx, &module.to_binary().unwrap(), "spin.trib").unwrap();
    assert_eq!(binary.to_text_with_comments().unwrap(), plain);
}

#[test]
fn cuda_code_for_a_named_architecture_needs_no_gpu() {
    let ctx = no_cache();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let o = CompileOptions::builder().target(Target::Cuda).arch("sm_90").num_warps(8).build().unwrap();
    let kernel = module.compile("vector_add", &o).unwrap();
    assert_eq!(kernel.target(), "cuda");
    let ptx = kernel.code("ptx").unwrap();
    assert!(ptx.contains(".target sm_90") && ptx.contains(".entry vector_add("), "{}", ptx);
    let meta = kernel.code("metadata").unwrap();
    assert!(meta.contains(r#""arch": "sm_90""#) && meta.contains(r#""num_warps": 8"#), "{}", meta);
    assert!(meta.contains(r#""block": [256, 1, 1]"#), "{}", meta);
    assert!(kernel.code("llvm").unwrap().contains("nvptx64-nvidia-cuda"));
    assert_eq!(kernel.code("cubin-of-the-future").unwrap_err().kind(), ErrorKind::NotFound);
    // The CPU shows its LLVM IR and assembly on request; a kind it does not make is named.
    let cpu = module.compile("vector_add", &CompileOptions::new().unwrap()).unwrap();
    assert!(cpu.code("llvm").unwrap().contains("target triple"));
    assert!(cpu.code("asm").unwrap().contains("tri.vector_add"));
    assert_eq!(cpu.code_bytes("asm").unwrap(), cpu.code("asm").unwrap().into_bytes());
    let e = cpu.code("ptx").unwrap_err();
    assert!(e.kind() == ErrorKind::NotFound && e.message().contains("target \"cpu\"") && e.message().contains("it makes: llvm"), "{}", e);
    // Bad GPU options are refused by the library.
    for (b, fragment) in [
        (CompileOptions::builder().num_warps(3), "3 warps"),
        (CompileOptions::builder().num_stages(9), "9 stages"),
        (CompileOptions::builder().launch_specialization(true, 17), "at most 16"),
        (CompileOptions::builder().arg_specialization(32, false), "parameter 32"),
    ] {
        let e = b.build().err().unwrap();
        assert!(e.kind() == ErrorKind::InvalidArgument && e.message().contains(fragment), "{}", e);
    }
    let bad_arch = CompileOptions::builder().target(Target::Cuda).arch("sm_1").build().unwrap();
    let e = module.compile("vector_add", &bad_arch).err().unwrap();
    assert!(e.kind() == ErrorKind::InvalidArgument && e.message().contains("sm_1"), "{}", e);
}

/// 200 f32s starting `offset` elements after a 64-byte boundary of `buf`.
fn aligned(buf: &mut [f32], offset: usize) -> &mut [f32] {
    let skip = (64 - buf.as_ptr() as usize % 64) % 64 / 4;
    &mut buf[skip + offset..skip + offset + 200]
}

#[test]
fn variants_of_launch_time_specialization_on_the_cpu() {
    let ctx = no_cache();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let plain =
        module.compile("vector_add", &CompileOptions::builder().constexpr_int("BLOCK", 64).build().unwrap()).unwrap();
    let o = CompileOptions::builder().constexpr_int("BLOCK", 64).launch_specialization(true, 2).build().unwrap();
    let kernel = module.compile("vector_add", &o).unwrap();
    let (mut xb, mut yb, mut ob) = (vec![0.0f32; 256], vec![1.5f32; 256], vec![0.0f32; 256]);
    for (xoff, n) in [(0, 160), (0, 160), (1, 160), (1, 37)] {
        for k in [&plain, &kernel] {
            aligned(&mut xb, xoff).iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
            let (x, y, out) = (&*aligned(&mut xb, xoff), &*aligned(&mut yb, 0), aligned(&mut ob, 0));
            // SAFETY: within n <= 160 of 200 elements.
            unsafe { k.launch(4, &[Arg::slice(x), Arg::slice(y), Arg::slice_mut(out), Arg::i32(n)]).unwrap() };
            assert!((0..n as usize).all(|i| out[i] == x[i] + 1.5));
        }
    }
    assert_eq!(plain.variants().unwrap(), r#"{"schema": 1, "max_variants": 8, "variants": []}"#);
    let v = kernel.variants().unwrap();
    assert!(v.contains(r#""max_variants": 2"#), "{}", v);
    assert_eq!(v.matches(r#""key""#).count(), 2, "{}", v);
    assert!(v.contains("argument 3 (%n) changed class: not divisible by 16 -> divisible by 16"), "{}", v);
    assert!(
        v.contains("argument 0 (%x) changed class: aligned to 16 -> not aligned to 16 (from the variant for"),
        "{}",
        v
    );
}

/// Runs `test` of this file again in a child process whose CUDA driver cannot load, with
/// TRI_TEST_CHILD set; returns true in that child.
fn in_child_without_driver(test: &str) -> bool {
    if std::env::var_os("TRI_TEST_CHILD").is_some() {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env("TRI_LIBCUDA", "/nonexistent/libcuda.so.1")
        .env("TRI_TEST_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed:\n{}\n{}", stdout, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "the child ran no test:\n{}", stdout);
    false
}

#[test]
fn device_queries_without_a_driver_say_why() {
    if !in_child_without_driver("device_queries_without_a_driver_say_why") {
        return;
    }
    let ctx = no_cache();
    let errors = [
        ctx.device_count().map(|_| ()).unwrap_err(),
        ctx.devices().map(|_| ()).unwrap_err(),
        ctx.device_name(0).map(|_| ()).unwrap_err(),
        ctx.device_attribute(0, tri::DeviceAttr::SmCount).map(|_| ()).unwrap_err(),
    ];
    for e in errors {
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{}", e);
        assert!(e.message().contains("no CUDA driver") && e.message().contains("/nonexistent/libcuda.so.1"), "{}", e);
    }
}

#[test]
fn device_queries_with_whatever_driver_is_here() {
    let ctx = no_cache();
    let n = match ctx.device_count() {
        Ok(n) => n,
        Err(e) => {
            assert!(e.kind() == ErrorKind::Unsupported && e.message().contains("no CUDA driver"), "{}", e);
            return;
        }
    };
    let devices = ctx.devices().unwrap();
    assert_eq!(devices.len(), n as usize);
    for d in &devices {
        assert!(!d.name.is_empty() && d.warp_size == 32 && d.compute_capability.0 >= 3, "{:?}", d);
        assert!(d.arch().starts_with("sm_") && d.shared_per_block_optin >= d.shared_per_block, "{:?}", d);
    }
    assert_eq!(ctx.device_name(n).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn cuda_launches_reach_the_library_without_a_driver() {
    if !in_child_without_driver("cuda_launches_reach_the_library_without_a_driver") {
        return;
    }
    let ctx = no_cache();
    let module = Module::from_file(&ctx, example("vector_add.tri")).unwrap();
    let o = CompileOptions::builder().target(Target::Cuda).arch("sm_90").build().unwrap();
    let kernel = module.compile("vector_add", &o).unwrap();
    let d = Arg::device::<f32>(DevicePtr::NULL, 0);
    let args = [d, d, d, Arg::i32(0)];
    // SAFETY: nothing reaches a GPU: there is no driver, and an empty grid makes no driver call.
    unsafe {
        kernel.launch(0, &args).unwrap();
        for e in [
            kernel.launch(1, &args).unwrap_err(),
            kernel.launch_on(0x1234 as tri::Stream, 1, &args).unwrap_err(),
            kernel.plan(1, &args).unwrap().launch().unwrap_err(),
        ] {
            assert!(e.kind() == ErrorKind::Unsupported && e.message().contains("no CUDA driver"), "{}", e);
        }
    }
    // Host slices are refused by a "cuda" kernel before the call.
    let x = vec![0.0f32; 4];
    let e = unsafe { kernel.launch(1, &[Arg::slice(&x), d, d, Arg::i32(4)]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LaunchArgs);
    assert!(
        e.message().contains(
            "so it takes a device buffer of f32 (the kernel runs on the GPU), but a host buffer of f32 was given"
        ),
        "{}",
        e
    );
    let e = unsafe { kernel.launch(1, &[Arg::device_bytes(DevicePtr::NULL, 0, DType::F16), d, d, Arg::i32(4)]) }
        .unwrap_err();
    assert!(e.message().contains("but a device buffer of f16 was given"), "{}", e);
}
