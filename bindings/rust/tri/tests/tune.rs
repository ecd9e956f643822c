// Autotuning on the CPU target (Module::tune over tri_tune, docs/tune.md): a config that fails
// to compile is reported and the others run, the chosen kernel computes out = x + y, the
// written buffer comes back as it was, a second call is answered from the stored result, an
// exported result is used by a fresh context in frozen mode, and a filtered product space
// yields the configs the filter keeps.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tri::{
    Arg, CompileOptions, Context, ErrorKind, Grid, Module, Target, TuneConfig, TuneFlags, TuneGrid, TuneProduct,
    TuneSpace, TuneStat, TuneStats,
};

const N: usize = 5000;

fn vadd_tri() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/vadd.tri")
}

/// A fresh folder under the system's temporary directory.
fn temp_dir(what: &str) -> PathBuf {
    static K: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "tri-rs-tune-{}-{}-{}-{}",
        what,
        std::process::id(),
        nanos,
        K.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cpu() -> CompileOptions {
    CompileOptions::builder().target(Target::Cpu).build().unwrap()
}

/// cdiv(N, BLOCK) programs: the grid of each config.
fn grid_of(c: &TuneConfig) -> Grid {
    let block = c.get("BLOCK").expect("every config sets BLOCK") as usize;
    Grid::from(((N + block - 1) / block) as u32)
}

/// BLOCK=256; BLOCK=100 (not a power of two: does not compile); BLOCK=1024 with 1 stage.
fn space() -> TuneSpace {
    TuneSpace::new()
        .config(TuneConfig::new().constexpr("BLOCK", 256).num_warps(4))
        .config(TuneConfig::new().constexpr("BLOCK", 100))
        .config(TuneConfig::new().constexpr("BLOCK", 1024).num_stages(1))
        .key(&["n"])
        .repetitions(3)
}

fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x: Vec<f32> = (0..N).map(|i| (i as f32) * 0.25 - 100.0).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 17) as f32).collect();
    (x, y, vec![7.0f32; N])
}

#[test]
fn tune_chooses_stores_exports_and_imports() {
    let dir = temp_dir("store");
    let (x, y, mut out) = inputs();
    let ctx = Context::builder().cache_dir(dir.join("cache")).build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let space = space();

    // SAFETY: vadd stays within n elements of each buffer and writes only `out`.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &space,
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    assert_eq!(tuned.source, "benchmark", "{}", tuned.json);
    assert!(tuned.best == 0 || tuned.best == 2, "best {} in {}", tuned.best, tuned.json);
    assert_eq!(tuned.trials.len(), 3);
    assert!(tuned.trials[0].is_ok() && tuned.trials[2].is_ok(), "{}", tuned.json);
    assert!(tuned.trials[0].median_ns.unwrap() > 0.0 && tuned.trials[2].median_ns.unwrap() > 0.0);
    let failed = &tuned.trials[1];
    assert_ne!(failed.status, tri::sys::TRI_OK);
    assert!(failed.error.as_deref().unwrap_or("").contains("power of two"), "{:?}", failed.error);
    assert!(failed.median_ns.is_none());
    assert_eq!(failed.config, TuneConfig::new().constexpr("BLOCK", 100));
    assert!(tuned.json.contains("\"best\"") && tuned.json.contains("\"configs\""));
    assert_eq!(tuned.config, if tuned.best == 0 { space_config(256, 0) } else { space_config(1024, 1) });
    assert_eq!(tuned.grid, grid_of(&tuned.config));
    assert!(out.iter().all(|&v| v == 7.0), "tune must leave the written buffer as it found it");
    assert_eq!(ctx.tune_stat(TuneStat::Trials).unwrap(), 2);
    assert_eq!(tuned.kernel.name(), "vadd");
    assert_eq!(tuned.kernel.target(), "cpu");

    // The chosen kernel computes out = x + y.
    // SAFETY: as above.
    unsafe {
        tuned.kernel.launch(tuned.grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)])
    }
    .unwrap();
    assert!(out.iter().zip(x.iter().zip(&y)).all(|(o, (a, b))| *o == a + b));

    // The same call again: the stored result, nothing benchmarked.
    let before = ctx.tune_stats().unwrap();
    // SAFETY: as above.
    let again = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &space,
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    assert_eq!(again.source, "stored");
    assert_eq!(again.best, tuned.best);
    let after = ctx.tune_stats().unwrap();
    assert_eq!(after.stored, before.stored + 1);
    assert_eq!(after.trials, before.trials);
    assert_eq!(after, TuneStats { trials: 2, stored: 1, defaults: 0, pruned: 0, other_device: 0 });

    let exported = dir.join("tuned.json");
    assert_eq!(ctx.tune_export(&exported).unwrap(), 1);
    let chosen = tuned.best;
    drop((again, tuned, module, ctx));

    // A fresh context without a disk cache: frozen finds nothing, then the imported result.
    let ctx2 = Context::builder().cache_dir("").build().unwrap();
    let module2 = Module::from_file(&ctx2, vadd_tri()).unwrap();
    let frozen = |m: &Module, out: &mut Vec<f32>| {
        // SAFETY: as above.
        unsafe {
            m.tune(
                "vadd",
                &cpu(),
                &space,
                TuneGrid::per_config(grid_of),
                &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(out), Arg::i32(N as i32)],
                TuneFlags::FROZEN,
            )
        }
        .unwrap()
    };
    let none = frozen(&module2, &mut out);
    assert_eq!(none.source, "default");
    assert_eq!(none.best, 0);
    assert_eq!(ctx2.tune_stat(TuneStat::Defaults).unwrap(), 1);
    assert_eq!(ctx2.tune_import(&exported).unwrap(), 1);
    let imported = frozen(&module2, &mut out);
    assert_eq!(imported.source, "imported", "{}", imported.json);
    assert_eq!(imported.best, chosen);
    assert_eq!(ctx2.tune_stat(TuneStat::Trials).unwrap(), 0);
    assert_eq!(ctx2.tune_stat(TuneStat::Stored).unwrap(), 1);
    out.iter_mut().for_each(|v| *v = 0.0);
    // SAFETY: as above.
    unsafe {
        imported
            .kernel
            .launch(imported.grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)])
    }
    .unwrap();
    assert!(out.iter().zip(x.iter().zip(&y)).all(|(o, (a, b))| *o == a + b));
    let _ = std::fs::remove_dir_all(&dir);
}

fn space_config(block: i64, stages: i32) -> TuneConfig {
    TuneConfig::new().constexpr("BLOCK", block).num_stages(stages)
}

#[test]
fn a_filtered_product_yields_the_configs_it_keeps() {
    let dir = temp_dir("product");
    let (x, y, mut out) = inputs();
    let ctx = Context::builder().cache_dir(dir.join("cache")).build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let space = TuneSpace::new()
        .product(TuneProduct::new().values("BLOCK", &[128, 256, 512, 1024]).filter("BLOCK >= 256"))
        .repetitions(2);
    // SAFETY: as in the test above.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &space,
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    let blocks: Vec<Option<i64>> = tuned.trials.iter().map(|t| t.config.get("BLOCK")).collect();
    assert_eq!(blocks, vec![Some(256), Some(512), Some(1024)], "{}", tuned.json);
    assert!(tuned.trials.iter().all(|t| t.is_ok() && t.config.num_warps == 4 && t.config.num_stages == 0));
    assert_eq!(ctx.tune_stat(TuneStat::Trials).unwrap(), 3);
    // SAFETY: as above.
    unsafe {
        tuned.kernel.launch(tuned.grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)])
    }
    .unwrap();
    assert!(out.iter().zip(x.iter().zip(&y)).all(|(o, (a, b))| *o == a + b));

    // Warps and stages multiply the product, stages fastest; a single config may precede it.
    let mixed = TuneSpace::new()
        .config(TuneConfig::new().constexpr("BLOCK", 64))
        .product(
            TuneProduct::new()
                .values("BLOCK", &[256, 512])
                .warps(&[2, 8])
                .stages(&[0, 2])
                .filter("warps * BLOCK >= 1024"),
        )
        .repetitions(1);
    // SAFETY: as above.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &mixed,
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::RETUNE,
        )
    }
    .unwrap();
    let got: Vec<(i64, i32, i32)> = tuned
        .trials
        .iter()
        .map(|t| (t.config.get("BLOCK").unwrap(), t.config.num_warps, t.config.num_stages))
        .collect();
    assert_eq!(got, vec![(64, 4, 0), (256, 8, 0), (256, 8, 2), (512, 2, 0), (512, 2, 2), (512, 8, 0), (512, 8, 2)]);
    let _ = std::fs::remove_dir_all(&dir);
}

// Each config's grid reaches the library, all three numbers: a grid past the limits (x below
// 2^31, y and z below 2^16) fails the launches of its config alone; a fixed grid serves every
// config.
#[test]
fn each_config_gets_its_grid() {
    let (x, y, mut out) = inputs();
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let space = TuneSpace::new()
        .config(TuneConfig::new().constexpr("BLOCK", 64))
        .config(TuneConfig::new().constexpr("BLOCK", 128))
        .config(TuneConfig::new().constexpr("BLOCK", 256))
        .config(TuneConfig::new().constexpr("BLOCK", 512))
        .repetitions(1);
    let grid = |c: &TuneConfig| match c.get("BLOCK") {
        Some(64) => Grid(1 << 31, 1, 1),
        Some(128) => Grid(40, 1 << 16, 1),
        Some(256) => Grid(20, 1, 1 << 16),
        _ => grid_of(c),
    };
    // SAFETY: vadd stays within n elements of each buffer and writes only `out`.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &space,
            TuneGrid::per_config(grid),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    let ok: Vec<bool> = tuned.trials.iter().map(|t| t.is_ok()).collect();
    assert_eq!(ok, vec![false, false, false, true], "{}", tuned.json);
    assert_eq!((tuned.best, tuned.grid), (3, Grid(10, 1, 1)));

    let one = TuneSpace::new().config(TuneConfig::new().constexpr("BLOCK", 256)).repetitions(1);
    // SAFETY: as above; 20 programs of 256 cover the 5000 elements.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &one,
            20u32,
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    assert!(tuned.trials[0].is_ok() && tuned.grid == Grid(20, 1, 1), "{}", tuned.json);
    // SAFETY: as above.
    unsafe {
        tuned.kernel.launch(tuned.grid, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)])
    }
    .unwrap();
    assert!(out.iter().zip(x.iter().zip(&y)).all(|(o, (a, b))| *o == a + b));
}

#[test]
fn tune_errors() {
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let (x, y, mut out) = inputs();
    let tune = |space: &TuneSpace, args: &[Arg]| {
        // SAFETY: every call below fails before a launch, or launches vadd within its buffers.
        unsafe { module.tune("vadd", &cpu(), space, 1u32, args, TuneFlags::NONE) }.err().unwrap()
    };
    let block = TuneSpace::new().config(TuneConfig::new().constexpr("BLOCK", 1024));
    {
        let args = [Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)];
        assert_eq!(tune(&TuneSpace::new(), &args).kind(), ErrorKind::InvalidArgument);
        let e = tune(&block.clone().key(&["nope"]), &args);
        assert!(e.message().contains("no runtime parameter %nope"), "{}", e);
        let e = tune(&TuneSpace::new().product(TuneProduct::new().values("BLOCK", &[256]).filter("BLOCK >")), &args);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e);
        let e = tune(&TuneSpace::new().product(TuneProduct::new().values("BLOCK", &[])), &args);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e);
        let e = tune(&TuneSpace::new().config(TuneConfig::new().constexpr("BLOCK", 1024).num_warps(3)), &args);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e);
    }
    // A wrong argument is refused before the call, naming it.
    let e = tune(&block, &[Arg::slice(&x), Arg::slice(&y), Arg::i32(N as i32)]);
    assert_eq!(e.kind(), ErrorKind::LaunchArgs);
    let ints = vec![0i32; N];
    let e = tune(&block, &[Arg::slice(&ints), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)]);
    assert_eq!(e.kind(), ErrorKind::LaunchArgs);
    assert!(e.message().contains("argument 0 (%x)"), "{}", e);
    // SAFETY: fails before any launch.
    let e = unsafe {
        module.tune(
            "nope",
            &cpu(),
            &block,
            1u32,
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out)],
            TuneFlags::NONE,
        )
    }
    .err()
    .unwrap();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(ctx.tune_import("/nonexistent/tuned.json").unwrap_err().kind(), ErrorKind::Io);
    let dir = temp_dir("bad");
    std::fs::write(dir.join("bad.json"), "{\"not\": \"an export\"}").unwrap();
    assert_eq!(ctx.tune_import(dir.join("bad.json")).unwrap_err().kind(), ErrorKind::CorruptBinary);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flags_combine() {
    let f = TuneFlags::FROZEN | TuneFlags::USE_OTHER_DEVICE;
    assert_eq!(f.raw(), (tri::sys::TRI_TUNE_FROZEN | tri::sys::TRI_TUNE_USE_OTHER_DEVICE) as u32);
    assert!(f.contains(TuneFlags::FROZEN) && !f.contains(TuneFlags::RETUNE));
    assert_eq!(TuneFlags::default(), TuneFlags::NONE);
    let c = TuneConfig::new().constexpr("BLOCK", 1).constexpr("BLOCK", 2).num_warps(8);
    assert_eq!((c.get("BLOCK"), c.get("warps"), c.get("stages"), c.get("nope")), (Some(2), Some(8), Some(0), None));
}

#[test]
fn progress_reports_every_compile_and_benchmark() {
    let dir = temp_dir("progress");
    let (x, y, mut out) = inputs();
    let ctx = Context::builder().cache_dir(dir.join("cache")).build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let mut seen: Vec<tri::TuneProgress> = Vec::new();
    let mut record = |p: &tri::TuneProgress| seen.push(p.clone());
    // SAFETY: vadd stays within n elements of each buffer and writes only `out`.
    unsafe {
        module.tune_with_progress(
            std::ptr::null_mut(),
            "vadd",
            &cpu(),
            &space(),
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
            Some(&mut record),
        )
    }
    .unwrap();
    let compiles: Vec<_> = seen.iter().filter(|p| p.stage == tri::TuneStage::Compile).collect();
    let benches: Vec<_> = seen.iter().filter(|p| p.stage == tri::TuneStage::Benchmark).collect();
    let mut indices: Vec<usize> = compiles.iter().map(|p| p.index).collect();
    indices.sort_unstable();
    assert_eq!(indices, vec![0, 1, 2]);
    assert_eq!(compiles.iter().map(|p| p.done).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(benches.iter().map(|p| p.index).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(seen[..3].iter().all(|p| p.stage == tri::TuneStage::Compile), "compiles come first");
    let bad = compiles.iter().find(|p| p.index == 1).unwrap();
    assert_eq!(bad.config, TuneConfig::new().constexpr("BLOCK", 100));
    assert_ne!(bad.status, tri::sys::TRI_OK);
    assert!(benches[0].median_ns.unwrap() > 0.0 && benches[1].median_ns.is_none());
}

/// Checks that `svg` is well-formed XML as far as a picture of tri_tune_plot can need (Rust's
/// standard library has no XML parser): every tag closed in order, attributes quoted, `&` only
/// in entities, one root `<svg>` in the SVG namespace. Returns the text of the `<text>` elements.
fn well_formed_svg(svg: &str) -> Vec<String> {
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{}", svg);
    let mut stack: Vec<&str> = Vec::new();
    let mut texts = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(lt) = rest.find('<') {
        let data = &rest[..lt];
        for (i, _) in data.match_indices('&') {
            let entity = &data[i..data[i..].find(';').map_or(data.len(), |e| i + e + 1)];
            assert!(["&lt;", "&gt;", "&amp;", "&quot;"].contains(&entity), "a bare & in {:?}", data);
        }
        if stack.last() == Some(&"text") {
            texts.push(data.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&"));
        }
        let gt = rest[lt..].find('>').expect("an unclosed tag") + lt;
        let tag = &rest[lt + 1..gt];
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{}>", tag);
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name), "</{}> closes nothing open", name);
        } else if !tag.ends_with('/') {
            if stack.is_empty() {
                roots += 1;
            }
            stack.push(tag.split_whitespace().next().unwrap());
        }
        rest = &rest[gt + 1..];
    }
    assert!(stack.is_empty() && rest.trim().is_empty() && roots == 1, "left open: {:?}", stack);
    texts
}

#[test]
fn the_tuning_space_as_a_picture() {
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::from_file(&ctx, vadd_tri()).unwrap();
    let (x, y, mut out) = inputs();
    // SAFETY: vadd stays within n elements of each buffer and writes only `out`.
    let tuned = unsafe {
        module.tune(
            "vadd",
            &cpu(),
            &space(),
            TuneGrid::per_config(grid_of),
            &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(N as i32)],
            TuneFlags::NONE,
        )
    }
    .unwrap();
    // The library draws it (tri_tune_plot): BLOCK and stages vary, so a heatmap of BLOCK rows.
    let svg = tuned.svg(None).unwrap();
    let texts = well_formed_svg(&svg);
    assert_eq!(texts[0], "@vadd on cpu");
    assert!(texts.iter().any(|t| t == "BLOCK") && texts.iter().any(|t| t == "stages"), "{:?}", texts);
    assert!(texts.iter().any(|t| t == "failed"), "BLOCK=100 does not compile: {:?}", texts);
    let winner = format!("winner: config {} (", tuned.best);
    assert!(texts.iter().any(|t| t.starts_with(&winner)), "{:?}", texts);
    assert_eq!(svg.matches("class=\"cell winner\"").count(), 1, "{}", svg);
    // The same JSON, through the free function, with a title of the caller's.
    let titled = tri::tune_svg(&tuned.json, Some("vadd <sweep>")).unwrap();
    assert_eq!(well_formed_svg(&titled)[0], "vadd <sweep>");
    // What is not a tuning result is refused, never drawn.
    let e = tri::tune_svg("{\"schema\": 1}", None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CorruptBinary, "{}", e);
    assert!(e.message().contains("tri_tune_plot"), "{}", e);
    assert_eq!(tri::tune_svg("{}", Some("a\0b")).unwrap_err().kind(), ErrorKind::InvalidArgument);
}
