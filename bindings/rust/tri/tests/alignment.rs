// A pointer argument that breaks the alignment its kernel was compiled for ({align=16} in the IR,
// or an arg_align promise) is refused before the launch, on every target: the host targets would
// read it without complaint, a GPU would fault or read wrong data.

use tri::{Arg, CompileOptions, Context, DevicePtr, ErrorKind, Module, Target};


/// Where in `buf` 16 floats start `offset` bytes after a 64-byte boundary.
fn at(buf: &[f32], offset: usize) -> usize {
    ((64 - buf.as_ptr() as usize % 64) % 64 + offset) / 4
}

#[test]
fn a_misaligned_pointer_is_refused_on_every_target() {
    let ctx = Context::new().unwrap();
    // @copy(%x: ptr<f32> {align=16}, %out: ptr<f32>, %n: i32)
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/copy_aligned.tri");
    let module = Module::from_file(&ctx, path).unwrap();
    let buf: Vec<f32> = (0..64).map(|i| i as f32).collect();
    for target in [Target::Interp, Target::Cpu] {
        let kernel = module.compile("copy", &CompileOptions::builder().target(target).build().unwrap()).unwrap();
        let mut out = vec![0.0f32; 16];
        let a = at(&buf, 0);
        // SAFETY: 16 floats in and out.
        unsafe { kernel.launch(1, &[Arg::slice(&buf[a..a + 16]), Arg::slice_mut(&mut out), Arg::i32(16)]) }.unwrap();
        assert_eq!(out[..], buf[a..a + 16]);
        let b = at(&buf, 4);
        // SAFETY: refused before the call.
        let e = unsafe { kernel.launch(1, &[Arg::slice(&buf[b..b + 16]), Arg::slice_mut(&mut out), Arg::i32(16)]) }
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LaunchArgs);
        assert!(e.message().contains("argument 0 (%x) of kernel @copy is ptr<f32> with {align=16}"), "{}", e);
        assert!(e.message().contains("is not a multiple of 16"), "{}", e);
    }
    // A promise is checked as a fact is.
    let kernel = module.compile("copy", &CompileOptions::builder().arg_align(1, 32).build().unwrap()).unwrap();
    let mut out = buf.clone();
    let (a, b) = (at(&buf, 0), at(&out, 16)); // out + b: 16 bytes past a 64-byte boundary
    let (_, tail) = out.split_at_mut(b);
    // SAFETY: refused before the call.
    let e = unsafe { kernel.launch(1, &[Arg::slice(&buf[a..a + 16]), Arg::slice_mut(&mut tail[..16]), Arg::i32(16)]) }
        .unwrap_err();
    assert!(e.message().contains("argument 1 (%out)") && e.message().contains("{align=32}"), "{}", e);
    // On the GPU target the check runs before a driver is needed.
    let gpu =
        module.compile("copy", &CompileOptions::builder().target(Target::Cuda).arch("sm_90").build().unwrap()).unwrap();
    let args = [
        Arg::device::<f32>(DevicePtr(0x7f00_0000_1004), 16),
        Arg::device::<f32>(DevicePtr(0x7f00_0000_2000), 16),
        Arg::i32(16),
    ];
    // SAFETY: refused before the call.
    let e = unsafe { gpu.launch(1, &args) }.unwrap_err();
    assert!(e.kind() == ErrorKind::LaunchArgs && e.message().contains("0x7f0000001004"), "{}", e);
}
