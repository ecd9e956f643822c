// Prepared launches on the host targets: a plan launches what `launch` launches, arguments,
// grid and stream are replaced in place, bad replacements are refused while the plan keeps its
// previous arguments, and the plan keeps its kernel alive after the kernel, module and context
// handles are dropped.

use tri::{Arg, CompileOptions, Context, DType, ErrorKind, Module, Target};

const SCALE: &str = r#"
kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %sv = splat %start : <BLOCK x i32>
  %offs = add %sv, %r : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %v = load %xp, mask=%mask : <BLOCK x f32>
  %ss = splat %s : <BLOCK x f32>
  %w = mul %v, %ss : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  store %op, %w, mask=%mask
  return
}
"#;

fn scale(target: Target) -> tri::Kernel {
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::new(&ctx, SCALE.as_bytes(), "scale.tri").unwrap();
    module.compile("scale", &CompileOptions::builder().target(target).build().unwrap()).unwrap()
}

#[test]
fn a_plan_launches_and_takes_replacements() {
    for target in [Target::Cpu, Target::Interp] {
        let kernel = scale(target);
        let x: Vec<f32> = (0..40).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..40).map(|i| (100 - i) as f32).collect();
        let doubles = vec![0.0f64; 40]; // outlives the plan, which may take it (and refuses it)
                                        // `out` goes in as raw parts, so this test can read it while the plan lives (a slice_mut
                                        // would stay borrowed by the plan).
        let mut out = vec![-1.0f32; 40];
        let out_ptr = out.as_mut_ptr();
        // SAFETY: `out` outlives the plan and is not reallocated.
        let out_arg = unsafe { Arg::from_raw_parts(out_ptr as *const std::ffi::c_void, 160, DType::F32) };
        // SAFETY (every launch below): scale reads x or y and writes out within n = 37 elements.
        let mut plan = kernel.plan(3, &[Arg::slice(&x), out_arg, Arg::i32(37), Arg::f32(2.0)]).unwrap();
        drop(kernel); // the plan keeps it alive
        unsafe { plan.launch().unwrap() };
        let read = |n: usize| unsafe { std::slice::from_raw_parts(out_ptr, n).to_vec() };
        let got = read(40);
        for i in 0..40 {
            assert_eq!(got[i], if i < 37 { 2.0 * i as f32 } else { -1.0 }, "{:?} {}", target, i);
        }
        plan.set_arg(0, Arg::slice(&y)).unwrap();
        plan.set_arg(3, Arg::f32(0.5)).unwrap();
        unsafe { plan.launch().unwrap() };
        let got = read(37);
        assert!(got.iter().enumerate().all(|(i, &v)| v == 0.5 * y[i]), "{:?}", got);
        // Bad replacements are refused (by the crate or the library) and change nothing.
        let e = plan.set_arg(0, Arg::f32(1.0)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LaunchArgs);
        assert!(e.message().contains("argument 0 (%x) of kernel @scale is ptr<f32>"), "{}", e);
        let e = plan.set_arg(4, Arg::f32(1.0)).unwrap_err();
        assert!(e.message().contains("there is no argument 4"), "{}", e);
        assert_eq!(plan.set_arg(0, Arg::slice(&doubles)).unwrap_err().kind(), ErrorKind::LaunchArgs);
        assert_eq!(plan.set_grid(0x8000_0000).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let mut dummy = 0u8;
        let e = plan.set_stream(&mut dummy as *mut u8 as tri::Stream).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        // A smaller grid leaves the last program's elements alone.
        unsafe { std::slice::from_raw_parts_mut(out_ptr, 40).fill(-1.0) };
        plan.set_grid((2, 1, 1)).unwrap();
        plan.set_stream(std::ptr::null_mut()).unwrap();
        unsafe { plan.launch().unwrap() };
        let got = read(40);
        for i in 0..40 {
            assert_eq!(got[i], if i < 32 { 0.5 * y[i] } else { -1.0 }, "{:?} {}", target, i);
        }
        assert_eq!(plan.kernel_name(), "scale");
        drop(plan);
        assert_eq!(out[0], 0.5 * y[0]);
    }
}

#[test]
fn plan_creation_checks_like_launch() {
    let kernel = scale(Target::Cpu);
    let x = vec![1.0f32; 16];
    let mut out = vec![0.0f32; 16];
    let e = kernel.plan(1, &[Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(16)]).err().unwrap();
    assert!(e.message().contains("takes 4 arguments"), "{}", e);
    let args = [Arg::slice(&x), Arg::slice(&x), Arg::i32(16), Arg::f32(1.0)];
    assert_eq!(kernel.plan((1, 65536), &args).err().unwrap().kind(), ErrorKind::InvalidArgument);
    let mut dummy = 0u8;
    let e = kernel.plan_on(&mut dummy as *mut u8 as tri::Stream, 1, &args).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("runs on the host"), "{}", e);
    // Device memory is refused by a host kernel, in a plan as in a launch.
    let dev = Arg::device::<f32>(tri::DevicePtr(0x1000), 16);
    let e = kernel.plan(1, &[dev, Arg::slice(&x), Arg::i32(16), Arg::f32(1.0)]).err().unwrap();
    assert!(e.message().contains("but a device buffer of f32 was given"), "{}", e);
    let mut plan = kernel.plan(1, &args).unwrap();
    assert_eq!(
        plan.set_arg(1, Arg::device_bytes(tri::DevicePtr(0x1000), 64, DType::F32)).unwrap_err().kind(),
        ErrorKind::LaunchArgs
    );
}
