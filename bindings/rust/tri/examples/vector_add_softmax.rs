// A complete program on the safe `tri` crate: vector add and a fused row softmax compiled for
// the CPU (or the interpreter: TRI_TARGET=interp), each checked against plain Rust, then the
// errors a user gets for a wrong argument and, in checked mode, for a buffer that is too short.
// `cargo run --example vector_add_softmax` runs it; `cargo test` runs it too (tests/example.rs).

use tri::{Arg, CompileOptions, Context, ErrorKind, Module, Target};

// The kernels are the repository's examples/*.tri, built into the program.
const VECTOR_ADD: &str = include_str!("../kernels/vector_add.tri");
const SOFTMAX: &str = include_str!("../kernels/softmax.tri");

/// Deterministic inputs in [-8, 8) without a random-number crate.
fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 16.0 - 8.0
        })
        .collect()
}

pub fn vector_add(ctx: &Context, target: Target, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let module = Module::new(ctx, VECTOR_ADD.as_bytes(), "vector_add.tri")?;
    let options = CompileOptions::builder().target(target).constexpr_int("BLOCK", 1024).build()?;
    let kernel = module.compile("vector_add", &options)?;
    let (x, y) = (inputs(n, 1), inputs(n, 2));
    let mut out = vec![0.0f32; n];
    let grid = ((n + 1023) / 1024) as u32;
    // SAFETY: vector_add reads x and y and writes out within n elements.
    unsafe { kernel.launch(grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(n as i32)])? };
    for i in 0..n {
        if out[i] != x[i] + y[i] {
            return Err(format!("vector_add: out[{}] = {}, expected {}", i, out[i], x[i] + y[i]).into());
        }
    }
    println!("vector_add ({:?}): {} elements match Rust", target, n);
    Ok(())
}

pub fn softmax(ctx: &Context, target: Target, rows: usize, cols: usize) -> Result<(), Box<dyn std::error::Error>> {
    let module = Module::new(ctx, SOFTMAX.as_bytes(), "softmax.tri")?;
    let options = CompileOptions::builder().target(target).constexpr_int("BLOCK", 1024).build()?;
    let kernel = module.compile("softmax", &options)?;
    let x = inputs(rows * cols, 3);
    let mut out = vec![0.0f32; rows * cols];
    let stride = cols as i32;
    // SAFETY: one program per row, each within its row of `cols` elements.
    unsafe {
        kernel.launch(
            rows as u32,
            &[Arg::slice_mut(&mut out), Arg::slice(&x), Arg::i32(stride), Arg::i32(stride), Arg::i32(cols as i32)],
        )?
    };
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        for c in 0..cols {
            let want = (row[c] as f64 - max).exp() / sum;
            let got = out[r * cols + c] as f64;
            if (got - want).abs() > 1e-6 + 1e-5 * want {
                return Err(format!("softmax: out[{}][{}] = {}, expected {}", r, c, got, want).into());
            }
        }
    }
    println!("softmax ({:?}): {} x {} matches Rust", target, rows, cols);
    Ok(())
}

/// A wrong argument: an i32 buffer where vector_add takes f32. The crate refuses it before the
/// call, with the error a user sees.
pub fn wrong_argument(ctx: &Context) -> Result<tri::Error, Box<dyn std::error::Error>> {
    let module = Module::new(ctx, VECTOR_ADD.as_bytes(), "vector_add.tri")?;
    let kernel = module.compile("vector_add", &CompileOptions::new()?)?;
    let x = vec![1i32; 16];
    let (y, mut out) = (vec![1.0f32; 16], vec![0.0f32; 16]);
    // SAFETY: the arguments are refused before anything runs.
    let err = unsafe { kernel.launch(1, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(16)]) }
        .expect_err("an i32 buffer for %x must be refused");
    assert_eq!(err.kind(), ErrorKind::LaunchArgs);
    Ok(err)
}

/// A buffer shorter than the count the kernel is told: the interpreter's checked mode stops at
/// the first load past its end, naming the op and the address.
pub fn too_short(ctx: &Context) -> Result<tri::Error, Box<dyn std::error::Error>> {
    let module = Module::new(ctx, VECTOR_ADD.as_bytes(), "vector_add.tri")?;
    let options = CompileOptions::builder().target(Target::Interp).checked(true).constexpr_int("BLOCK", 64).build()?;
    let kernel = module.compile("vector_add", &options)?;
    let (x, y) = (vec![1.0f32; 50], vec![1.0f32; 64]);
    let mut out = vec![0.0f32; 64];
    // SAFETY: checked mode bounds-checks every access against the slices' extents.
    let err = unsafe { kernel.launch(1, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(64)]) }
        .expect_err("a 50-element %x for n = 64 must be reported");
    assert_eq!(err.kind(), ErrorKind::Runtime);
    Ok(err)
}

pub fn run() -> Result<(), Box<dyn std::error::Error>> {
    let target = match std::env::var("TRI_TARGET").as_deref() {
        Ok("interp") => Target::Interp,
        _ => Target::Cpu,
    };
    let small = target == Target::Interp;
    let ctx = Context::new()?;
    vector_add(&ctx, target, if small { 3000 } else { 1_000_000 })?;
    softmax(&ctx, target, if small { 4 } else { 256 }, 1000)?;
    println!("wrong argument -> {}", wrong_argument(&ctx)?);
    println!("buffer too short (checked mode) -> {}", too_short(&ctx)?);
    Ok(())
}

#[allow(dead_code)] // the test includes this file for run() alone
fn main() {
    if let Err(e) = run() {
        eprintln!("error: {}", e);
        std::process::exit(1);
    }
}
