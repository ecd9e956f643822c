// Packages (docs/aot.md) from Rust: a package made by `tri aot` in the test (the tool named by
// TRI_TOOL, which tests/bindings/run.sh sets to the build's), loaded with Module::load_package
// and launched on the "cpu" target, its outputs checked. CTest runs it against libtri
// (bindings/rust) and, built with the feature runtime-only, against libtri_rt (bindings/rust-rt:
// `cargo test --features runtime-only --test package`).

use std::path::PathBuf;
use std::process::Command;

use tri::{Arg, CompileOptions, Context, ErrorKind, Module, Target};

fn package(tag: &str) -> PathBuf {
    let tool = std::env::var("TRI_TOOL").expect("set TRI_TOOL to the build's tri tool (BUILD/tools/tri)");
    let dir = std::env::temp_dir().join(format!("tri-rust-package-{}-{}", std::process::id(), tag));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("vector_add.tripkg");
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels/vector_add.tri");
    let made = Command::new(&tool)
        .arg("aot")
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .args(["--target", "cpu", "--kernel", "vector_add:BLOCK=256", "--kernel", "vector_add:BLOCK=1024"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {}", tool, e));
    assert!(made.status.success(), "tri aot failed: {}", String::from_utf8_lossy(&made.stderr));
    out
}

fn options(block: i64) -> CompileOptions {
    CompileOptions::builder().target(Target::Cpu).constexpr_int("BLOCK", block).build().unwrap()
}

fn add(module: &Module, block: i64) {
    let k = module.kernel("vector_add", &options(block)).unwrap();
    let n = 3001usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let mut out = vec![0f32; n];
    let grid = ((n as i64 + block - 1) / block) as u32;
    // SAFETY: host target; the slices outlive the launch.
    unsafe { k.launch(grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(n as i32)]) }
        .unwrap();
    for i in 0..n {
        assert_eq!(out[i], x[i] + y[i], "element {} with BLOCK={}", i, block);
    }
}

#[test]
fn a_package_loads_and_its_kernels_launch() {
    let ctx = Context::new().unwrap();
    let m = Module::package_from_file(&ctx, package("launch")).unwrap();
    add(&m, 256);
    add(&m, 1024);
    let names: Vec<String> = m.function("vector_add").unwrap().params.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names, ["x", "y", "out", "n", "BLOCK"]);
    let info = m.package_info().unwrap();
    assert!(info.starts_with("{\"schema\": 1"), "{}", info);
    assert!(info.contains("\"name\": \"vector_add\""), "{}", info);
}

#[test]
fn what_the_package_lacks_is_not_found_and_damage_is_refused() {
    let ctx = Context::new().unwrap();
    let bytes = std::fs::read(package("errors")).unwrap();
    let m = Module::load_package(&ctx, &bytes, "vector_add.tripkg").unwrap();
    let e = m.kernel("vector_add", &options(512)).err().expect("BLOCK=512 is not in the package");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{}", e);
    assert!(e.message().contains("BLOCK=256"), "{}", e);
    let mut damaged = bytes.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x40;
    let e = Module::load_package(&ctx, &damaged, "damaged.tripkg").err().expect("a damaged package loads");
    assert_eq!(e.kind(), ErrorKind::CorruptBinary, "{}", e);
}

// With libtri, the package's kernel gives what the kernel compiled from IR gives.
#[cfg(not(feature = "runtime-only"))]
#[test]
fn libtri_compiles_what_the_package_lacks() {
    let ctx = Context::new().unwrap();
    let m = Module::package_from_file(&ctx, package("compile")).unwrap();
    let k = m.compile("vector_add", &options(128)).unwrap();
    assert_eq!(k.arg_count(), 4);
}
