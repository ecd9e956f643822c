// Autotuning (tri_tune, docs/tune.md): a space of configs (single configs, and products of value
// lists kept by a filter) is tried over a launch's arguments, and the fastest config comes back
// compiled with the result as JSON. Results are stored by key beside the disk cache; the context
// exports and imports them and counts what tuning did.
//
// The space is a Rust value; each tune call builds the C space from it (and releases it), so
// one TuneSpace may be used from many threads and many calls. A per-config grid is computed in
// Rust for every config before the call and handed to the library through a trampoline (the
// way the log sink is bound); the configs of a product are read back from the C space
// (tri_tune_space_count, tri_tune_space_value), so the filter is the library's own.

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;

use tri_sys as sys;

use crate::context::{cstring, path_cstring, Context};
use crate::device::Stream;
use crate::error::{check, Error, Result};
use crate::json::Json;
use crate::kernel::{Arg, CompileOptions, Grid, Kernel, Signature};
use crate::module::{Blob, Module};

/// One config: constexpr values by name, warps and stages (as tri_tune_space_add_config takes
/// them). The defaults: no constexprs, 4 warps, 0 stages (the target's default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneConfig {
    /// In the order given; they add to or replace the compile options' constexprs.
    pub constexprs: Vec<(String, i64)>,
    /// 1, 2, 4, 8, 16 or 32 (GPU targets; host targets ignore it).
    pub num_warps: i32,
    /// 0 (the target's default) to 4.
    pub num_stages: i32,
}

impl Default for TuneConfig {
    fn default() -> TuneConfig {
        TuneConfig { constexprs: Vec::new(), num_warps: 4, num_stages: 0 }
    }
}

impl TuneConfig {
    pub fn new() -> TuneConfig {
        TuneConfig::default()
    }

    /// Sets constexpr `name` (replacing an earlier value of that name).
    pub fn constexpr(mut self, name: &str, value: i64) -> TuneConfig {
        match self.constexprs.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value,
            None => self.constexprs.push((name.to_string(), value)),
        }
        self
    }

    pub fn num_warps(mut self, warps: i32) -> TuneConfig {
        self.num_warps = warps;
        self
    }

    pub fn num_stages(mut self, stages: i32) -> TuneConfig {
        self.num_stages = stages;
        self
    }

    /// Constexpr `name`'s value; "warps" and "stages" (as filters name them) give num_warps and
    /// num_stages when no constexpr has that name.
    pub fn get(&self, name: &str) -> Option<i64> {
        match self.constexprs.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Some(*v),
            None if name == "warps" => Some(self.num_warps as i64),
            None if name == "stages" => Some(self.num_stages as i64),
            None => None,
        }
    }
}

/// The product of value lists (tri_tune_space_add_product): every combination of the
/// constexprs' values (the first name varies slowest), times each warps value (none given: 4)
/// and each stages value (none given: 0, stages fastest), kept where `filter` is nonzero.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TuneProduct {
    values: Vec<(String, Vec<i64>)>,
    warps: Vec<i32>,
    stages: Vec<i32>,
    filter: Option<String>,
}

impl TuneProduct {
    pub fn new() -> TuneProduct {
        TuneProduct::default()
    }

    /// The values constexpr `name` takes (a name given again replaces its list).
    pub fn values(mut self, name: &str, values: &[i64]) -> TuneProduct {
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = values.to_vec(),
            None => self.values.push((name.to_string(), values.to_vec())),
        }
        self
    }

    pub fn warps(mut self, warps: &[i32]) -> TuneProduct {
        self.warps = warps.to_vec();
        self
    }

    pub fn stages(mut self, stages: &[i32]) -> TuneProduct {
        self.stages = stages.to_vec();
        self
    }

    /// An integer expression over the names, `warps` and `stages` that keeps a combination when
    /// nonzero: C's operators + - * / % == != < <= > >= && || ! and parentheses
    /// ("BM * BN <= 32768 && warps <= BM / 16"; docs/tune.md).
    pub fn filter(mut self, expression: &str) -> TuneProduct {
        self.filter = Some(expression.to_string());
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Entry {
    Config(TuneConfig),
    Product(TuneProduct),
}

/// What to try: configs and products, numbered from 0 in the order added (the number is the
/// tie-break between equal times); the key parameters, whose values select a stored result; the
/// timed repetitions per config.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TuneSpace {
    entries: Vec<Entry>,
    key: Vec<String>,
    bucket: bool,
    repetitions: Option<u32>,
}

impl TuneSpace {
    pub fn new() -> TuneSpace {
        TuneSpace::default()
    }

    pub fn config(mut self, config: TuneConfig) -> TuneSpace {
        self.entries.push(Entry::Config(config));
        self
    }

    pub fn product(mut self, product: TuneProduct) -> TuneSpace {
        self.entries.push(Entry::Product(product));
        self
    }

    /// The runtime parameters (names without '%', integer scalars) whose values select a
    /// result: a call with other values tunes again.
    pub fn key(mut self, params: &[&str]) -> TuneSpace {
        self.key = params.iter().map(|p| p.to_string()).collect();
        self
    }

    /// Rounds the key values up to a power of two first (1000 and 1024 share a result).
    pub fn bucket(mut self, on: bool) -> TuneSpace {
        self.bucket = on;
        self
    }

    /// Timed launches per config, 1 to 10000 (default 10); each config also runs once untimed.
    pub fn repetitions(mut self, repetitions: u32) -> TuneSpace {
        self.repetitions = Some(repetitions);
        self
    }
}

/// The grid of the tuning launches: one for every config, or one per config (a grid that
/// depends on a block size, such as `cdiv(n, BLOCK)`).
pub enum TuneGrid<'f> {
    Fixed(Grid),
    PerConfig(Box<dyn Fn(&TuneConfig) -> Grid + 'f>),
}

impl<'f> TuneGrid<'f> {
    pub fn per_config(f: impl Fn(&TuneConfig) -> Grid + 'f) -> TuneGrid<'f> {
        TuneGrid::PerConfig(Box::new(f))
    }
}

impl<'f> From<Grid> for TuneGrid<'f> {
    fn from(g: Grid) -> TuneGrid<'f> {
        TuneGrid::Fixed(g)
    }
}
impl<'f> From<u32> for TuneGrid<'f> {
    fn from(x: u32) -> TuneGrid<'f> {
        TuneGrid::Fixed(Grid::from(x))
    }
}
impl<'f> From<(u32, u32)> for TuneGrid<'f> {
    fn from(g: (u32, u32)) -> TuneGrid<'f> {
        TuneGrid::Fixed(Grid::from(g))
    }
}
impl<'f> From<(u32, u32, u32)> for TuneGrid<'f> {
    fn from(g: (u32, u32, u32)) -> TuneGrid<'f> {
        TuneGrid::Fixed(Grid::from(g))
    }
}

/// How a tune call uses stored results (`TRI_TUNE_*`); combine with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TuneFlags(u32);

impl TuneFlags {
    /// Benchmark when no stored or imported result answers the key.
    pub const NONE: TuneFlags = TuneFlags(0);
    /// Never benchmark: a key with no result uses config 0 (logged).
    pub const FROZEN: TuneFlags = TuneFlags(sys::TRI_TUNE_FROZEN as u32);
    /// Ignore stored and imported results: benchmark, then store the new result.
    pub const RETUNE: TuneFlags = TuneFlags(sys::TRI_TUNE_RETUNE as u32);
    /// Use an imported result made on another device (another GPU, another CPU) without
    /// benchmarking; without it such a result is reported and the key is tuned here.
    pub const USE_OTHER_DEVICE: TuneFlags = TuneFlags(sys::TRI_TUNE_USE_OTHER_DEVICE as u32);

    pub fn raw(self) -> u32 {
        self.0
    }

    pub fn contains(self, other: TuneFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for TuneFlags {
    type Output = TuneFlags;
    fn bitor(self, other: TuneFlags) -> TuneFlags {
        TuneFlags(self.0 | other.0)
    }
}

/// One config's outcome in a result.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneTrial {
    pub index: usize,
    pub config: TuneConfig,
    /// `TRI_OK`, or the error that skipped the config (its compile or launch failed, or it was
    /// pruned: `TRI_ERROR_LIMIT_EXCEEDED`).
    pub status: i32,
    pub error: Option<String>,
    /// The median of the timed launches, for a config measured (now or when the result was made).
    pub median_ns: Option<f64>,
}

/// The stage a `TuneProgress` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TuneStage {
    /// A config finished compiling (or failed to, or was pruned). Compiles run at once and
    /// finish in any order.
    Compile,
    /// A config finished benchmarking (or was skipped). Benchmarks run one at a time, in order.
    Benchmark,
}

/// One step of a tuning run, as `Module::tune_with_progress` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneProgress {
    pub stage: TuneStage,
    /// The config's index in the space, and the config.
    pub index: usize,
    pub config: TuneConfig,
    /// How many configs have finished this stage (this one included), of `count`.
    pub done: u32,
    pub count: u32,
    /// `TRI_OK`, or the error that skipped the config.
    pub status: i32,
    /// A benchmark's median time.
    pub median_ns: Option<f64>,
}

/// The user's function and what the trampoline needs to call it: the configs, and the panic it
/// caught (resumed once tri_tune returns: it must not unwind into C).
struct ProgressSink<'p> {
    f: &'p mut dyn FnMut(&TuneProgress),
    configs: &'p [TuneConfig],
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn stage_trampoline(
    user: *mut sys::c_void,
    stage: i32,
    config: u32,
    done: u32,
    count: u32,
    status: sys::tri_result,
    median_ns: f64,
) {
    let sink = &mut *(user as *mut ProgressSink);
    if sink.panic.is_some() {
        return;
    }
    let stage = if stage == sys::TRI_TUNE_STAGE_COMPILE { TuneStage::Compile } else { TuneStage::Benchmark };
    let progress = TuneProgress {
        stage,
        index: config as usize,
        config: sink.configs.get(config as usize).cloned().unwrap_or_default(),
        done,
        count,
        status,
        median_ns: if stage == TuneStage::Benchmark && status == sys::TRI_OK { Some(median_ns) } else { None },
    };
    let f = &mut sink.f;
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(&progress))) {
        sink.panic = Some(p);
    }
}

impl TuneTrial {
    pub fn is_ok(&self) -> bool {
        self.status == sys::TRI_OK
    }
}

/// What a tune call gives: the chosen config compiled, which one it is and its grid, and the
/// result (docs/tune.md, "The result").
pub struct Tuned {
    /// The chosen config compiled with the compile options plus its constexprs, warps, stages.
    pub kernel: Kernel,
    /// The chosen config's index.
    pub best: usize,
    pub config: TuneConfig,
    /// The chosen config's grid (launch `kernel` with it).
    pub grid: Grid,
    /// Where the answer came from: "benchmark" (measured now), "stored", "imported", or
    /// "default" (frozen with no result: config 0).
    pub source: String,
    /// Every config, by index.
    pub trials: Vec<TuneTrial>,
    /// The result as the library wrote it, JSON.
    pub json: String,
}

impl Tuned {
    /// This result as an SVG picture (`tune_svg`); `title` None: "@kernel on target".
    pub fn svg(&self, title: Option<&str>) -> Result<String> {
        tune_svg(&self.json, title)
    }
}

/// The SVG picture of a tuning result (tri_tune_plot, the renderer `tri tune --plot` and every
/// binding share; docs/tune.md "Plots"): `json` is one result as `Tuned::json`, a stored result
/// file or one entry of a `tune_export` file holds it; `title` heads it (None: "@kernel on
/// target"). Two or more values that vary give a heatmap over the first two (each cell the
/// fastest config with those values), one gives a bar per config; the winner is outlined and
/// named. What is not a tuning result is `ErrorKind::CorruptBinary`.
pub fn tune_svg(json: &str, title: Option<&str>) -> Result<String> {
    let title = title.map(|t| cstring(t, "the title")).transpose()?;
    let mut out: *mut sys::tri_blob = ptr::null_mut();
    // SAFETY: json's bytes with their length, a NUL-terminated title or NULL, an out-parameter.
    check(unsafe {
        sys::tri_tune_plot(
            json.as_ptr() as *const std::os::raw::c_void,
            json.len(),
            title.as_ref().map_or(ptr::null(), |t| t.as_ptr()),
            &mut out,
        )
    })?;
    // SAFETY: the blob is ours (it belongs to no context): read its bytes once, then release it.
    let bytes = unsafe {
        let n = sys::tri_blob_size(out);
        let v = if n == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(sys::tri_blob_data(out) as *const u8, n).to_vec()
        };
        sys::tri_blob_destroy(out);
        v
    };
    String::from_utf8(bytes)
        .map_err(|_| Error::new(sys::TRI_ERROR_INTERNAL, "tri_tune_plot returned text that is not UTF-8"))
}

/// Owns a tri_tune_space for the span of one tune call.
struct RawSpace(*mut sys::tri_tune_space);

impl Drop for RawSpace {
    fn drop(&mut self) {
        // SAFETY: made by tri_tune_space_create, released once.
        unsafe { sys::tri_tune_space_destroy(self.0) }
    }
}

impl RawSpace {
    fn count(&self) -> Result<u32> {
        let mut n = 0u32;
        // SAFETY: a live space; out-parameter.
        check(unsafe { sys::tri_tune_space_count(self.0, &mut n) })?;
        Ok(n)
    }

    fn value(&self, index: u32, name: &CString) -> Result<i64> {
        let mut v = 0i64;
        // SAFETY: a live space, a NUL-terminated name, an out-parameter.
        check(unsafe { sys::tri_tune_space_value(self.0, index, name.as_ptr(), &mut v) })?;
        Ok(v)
    }

    fn add_config(&self, c: &TuneConfig) -> Result<()> {
        let names = c.constexprs.iter().map(|(n, _)| cstring(n, "constexpr name")).collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const sys::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let values: Vec<i64> = c.constexprs.iter().map(|(_, v)| *v).collect();
        // SAFETY: a live space; `names` and `values` hold `count` entries and are copied.
        check(unsafe {
            sys::tri_tune_space_add_config(
                self.0,
                name_ptrs.as_ptr() as *mut *const sys::c_char,
                values.as_ptr(),
                values.len() as u32,
                c.num_warps,
                c.num_stages,
                ptr::null_mut(),
            )
        })
    }

    /// Appends the product and returns the configs it appended, read back from the space.
    fn add_product(&self, p: &TuneProduct) -> Result<Vec<TuneConfig>> {
        let names = p.values.iter().map(|(n, _)| cstring(n, "constexpr name")).collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const sys::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let value_ptrs: Vec<*const i64> = p.values.iter().map(|(_, v)| v.as_ptr()).collect();
        let counts: Vec<u32> = p.values.iter().map(|(_, v)| v.len() as u32).collect();
        let filter = match &p.filter {
            Some(f) => Some(cstring(f, "filter")?),
            None => None,
        };
        let before = self.count()?;
        let mut added = 0u32;
        // SAFETY: a live space; every list holds the count passed with it and is read during the
        // call only; the filter is NUL-terminated or null.
        check(unsafe {
            sys::tri_tune_space_add_product(
                self.0,
                name_ptrs.as_ptr() as *mut *const sys::c_char,
                value_ptrs.as_ptr() as *mut *const i64,
                counts.as_ptr(),
                names.len() as u32,
                p.warps.as_ptr(),
                p.warps.len() as u32,
                p.stages.as_ptr(),
                p.stages.len() as u32,
                filter.as_ref().map_or(ptr::null(), |f| f.as_ptr()),
                &mut added,
            )
        })?;
        let after = self.count()?;
        if after - before != added {
            return Err(Error::new(
                sys::TRI_ERROR_INTERNAL,
                format!("tri_tune_space_add_product added {} configs, but the space grew by {}", added, after - before),
            ));
        }
        let (warps, stages) = (CString::new("warps").unwrap(), CString::new("stages").unwrap());
        (before..after)
            .map(|i| {
                let mut c = TuneConfig::new()
                    .num_warps(self.value(i, &warps)? as i32)
                    .num_stages(self.value(i, &stages)? as i32);
                for ((name, _), cname) in p.values.iter().zip(&names) {
                    c.constexprs.push((name.clone(), self.value(i, cname)?));
                }
                Ok(c)
            })
            .collect()
    }
}

unsafe extern "C" fn grid_trampoline(user: *mut sys::c_void, config: u32, grid: *mut u32) {
    // Nothing here can panic but indexing, which is checked; a panic must not unwind into C.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let grids = &*(user as *const Vec<Grid>);
        if let Some(Grid(x, y, z)) = grids.get(config as usize) {
            *grid = *x;
            *grid.add(1) = *y;
            *grid.add(2) = *z;
        }
    }));
}

fn bad_result(what: &str) -> Error {
    Error::new(sys::TRI_ERROR_INTERNAL, format!("tri_tune gave a result this crate cannot read: {}", what))
}

/// Reads "best", "source" and the configs' outcomes from the result JSON.
fn read_result(json: &str, configs: &[TuneConfig]) -> Result<(usize, String, Vec<TuneTrial>)> {
    let root = Json::parse(json).map_err(|e| bad_result(&e))?;
    let best = root.get("best").and_then(Json::as_i64).ok_or_else(|| bad_result("no \"best\""))?;
    let source = root.get("source").and_then(Json::as_str).unwrap_or("").to_string();
    let list = root.get("configs").and_then(Json::as_array).ok_or_else(|| bad_result("no \"configs\""))?;
    if list.len() != configs.len() || best < 0 || best as usize >= configs.len() {
        return Err(bad_result(&format!(
            "{} configs with best {}, for a space of {} configs",
            list.len(),
            best,
            configs.len()
        )));
    }
    let trials = list
        .iter()
        .zip(configs)
        .enumerate()
        .map(|(i, (c, config))| TuneTrial {
            index: i,
            config: config.clone(),
            status: c.get("status").and_then(Json::as_i64).unwrap_or(sys::TRI_ERROR_INTERNAL as i64) as i32,
            error: c.get("error").and_then(Json::as_str).map(str::to_string),
            median_ns: c.get("median_ns").and_then(Json::as_f64),
        })
        .collect();
    Ok((best as usize, source, trials))
}

impl Module {
    /// Tunes kernel `name` over `space` (tri_tune, docs/tune.md): every config compiles with
    /// `options` plus its constexprs, warps and stages, launches over `grid` with `args` (as
    /// `Kernel::launch` takes them), and the fastest is returned compiled. Configs that fail to
    /// compile or launch are skipped and reported in `Tuned::trials`; the call fails only when
    /// none runs. A result stored for the same kernel, space and key values (in this process or
    /// another, through the disk cache, or imported) answers without benchmarking, as `flags`
    /// allow. Buffers the kernel writes are restored before every launch and left as they were.
    ///
    /// # Safety
    /// As for `Kernel::launch`: every config's kernel must stay within each buffer's extent and
    /// write only to buffers passed with `Arg::slice_mut` (or raw parts, or device memory, the
    /// caller may write).
    pub unsafe fn tune<'f>(
        &self,
        name: &str,
        options: &CompileOptions,
        space: &TuneSpace,
        grid: impl Into<TuneGrid<'f>>,
        args: &[Arg],
        flags: TuneFlags,
    ) -> Result<Tuned> {
        self.tune_on(ptr::null_mut(), name, options, space, grid, args, flags)
    }

    /// `tune` on a CUDA stream (a `CUstream`; null is the default stream): "cuda" kernels are
    /// timed with events on it. Host targets take only null.
    ///
    /// # Safety
    /// As for `tune`; `stream` must be a live stream of the device the memory is on.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tune_on<'f>(
        &self,
        stream: Stream,
        name: &str,
        options: &CompileOptions,
        space: &TuneSpace,
        grid: impl Into<TuneGrid<'f>>,
        args: &[Arg],
        flags: TuneFlags,
    ) -> Result<Tuned> {
        self.tune_with_progress(stream, name, options, space, grid, args, flags, None)
    }

    /// `tune_on`, calling `progress` (on this thread) as each config finishes compiling and
    /// benchmarking: a progress bar, or a line per config in a log. A panic in it is resumed
    /// once tri_tune has returned.
    ///
    /// # Safety
    /// As for `tune_on`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tune_with_progress<'f>(
        &self,
        stream: Stream,
        name: &str,
        options: &CompileOptions,
        space: &TuneSpace,
        grid: impl Into<TuneGrid<'f>>,
        args: &[Arg],
        flags: TuneFlags,
        progress: Option<&mut dyn FnMut(&TuneProgress)>,
    ) -> Result<Tuned> {
        let sig = Signature::of(self, name, options)?;
        sig.check_args(args)?;
        let cname = cstring(name, "kernel name")?;
        let mut raw = ptr::null_mut();
        check(sys::tri_tune_space_create(&mut raw))?;
        let cspace = RawSpace(raw);
        let mut configs: Vec<TuneConfig> = Vec::new();
        for entry in &space.entries {
            match entry {
                Entry::Config(c) => {
                    cspace.add_config(c)?;
                    configs.push(c.clone());
                }
                Entry::Product(p) => configs.extend(cspace.add_product(p)?),
            }
        }
        let mut key = Vec::with_capacity(space.key.len());
        for k in &space.key {
            let i = sig.param_index(k).ok_or_else(|| {
                Error::new(
                    sys::TRI_ERROR_INVALID_ARGUMENT,
                    format!("tune: kernel @{} has no runtime parameter %{}", name, k),
                )
            })?;
            key.push(i as u32);
        }
        check(sys::tri_tune_space_set_key(cspace.0, key.as_ptr(), key.len() as u32, space.bucket as i32))?;
        if let Some(r) = space.repetitions {
            check(sys::tri_tune_space_set_repetitions(cspace.0, r))?;
        }
        let (fixed, grids) = match grid.into() {
            TuneGrid::Fixed(g) => (g, None),
            TuneGrid::PerConfig(f) => (Grid(1, 1, 1), Some(configs.iter().map(|c| f(c)).collect::<Vec<Grid>>())),
        };
        let grid_fn: sys::tri_tune_grid_fn = if grids.is_some() { Some(grid_trampoline) } else { None };
        let user = grids.as_ref().map_or(ptr::null_mut(), |g| g as *const Vec<Grid> as *mut sys::c_void);
        let mut sink = progress.map(|f| ProgressSink { f, configs: &configs, panic: None });
        match sink.as_mut() {
            Some(s) => check(sys::tri_tune_space_set_progress(
                cspace.0,
                Some(stage_trampoline),
                s as *mut ProgressSink as *mut sys::c_void,
            ))?,
            None => check(sys::tri_tune_space_set_progress(cspace.0, None, ptr::null_mut()))?,
        }
        let raw_args: Vec<sys::tri_arg> = args.iter().map(|a| *a.as_raw()).collect();
        let (mut out_kernel, mut out_result) = (ptr::null_mut(), ptr::null_mut());
        let Grid(gx, gy, gz) = fixed;
        // The grids outlive the call; the trampoline only reads them, on this thread.
        let rc = sys::tri_tune(
            self.as_raw(),
            cname.as_ptr(),
            options.raw,
            cspace.0,
            gx,
            gy,
            gz,
            stream,
            raw_args.as_ptr(),
            raw_args.len() as u32,
            flags.raw(),
            None,
            grid_fn,
            user,
            &mut out_kernel,
            &mut out_result,
        );
        let panic = sink.and_then(|s| s.panic);
        check(rc)?;
        // Both are owned from here on, whatever fails next.
        let blob = Blob::from_raw(out_result, self.context());
        let kernel = Kernel::adopt(self, name, options, out_kernel)?;
        if let Some(p) = panic {
            drop((blob, kernel));
            std::panic::resume_unwind(p);
        }
        let json = blob.into_string()?;
        let (best, source, trials) = read_result(&json, &configs)?;
        Ok(Tuned {
            kernel,
            best,
            config: configs[best].clone(),
            grid: grids.as_ref().map_or(fixed, |g| g[best]),
            source,
            trials,
            json,
        })
    }
}

/// What `Context::tune_stat` reads (`TRI_TUNE_STAT_*`), counting this context's tune calls since
/// it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TuneStat {
    /// Configs benchmarked.
    Trials,
    /// Tune calls answered by a stored or imported result.
    Stored,
    /// Frozen calls that found no result and used config 0.
    Defaults,
    /// Configs pruned before compiling (they could not fit the target).
    Pruned,
    /// Calls that met an imported result made on another device.
    OtherDevice,
}

impl TuneStat {
    pub fn raw(self) -> i32 {
        match self {
            TuneStat::Trials => sys::TRI_TUNE_STAT_TRIALS,
            TuneStat::Stored => sys::TRI_TUNE_STAT_STORED,
            TuneStat::Defaults => sys::TRI_TUNE_STAT_DEFAULTS,
            TuneStat::Pruned => sys::TRI_TUNE_STAT_PRUNED,
            TuneStat::OtherDevice => sys::TRI_TUNE_STAT_OTHER_DEVICE,
        }
    }
}

/// Every tuning counter at once (`Context::tune_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TuneStats {
    pub trials: u64,
    pub stored: u64,
    pub defaults: u64,
    pub pruned: u64,
    pub other_device: u64,
}

impl Context {
    /// Writes every tuning result this context knows (stored in its cache directory, made or
    /// imported here) to a JSON file at `path` (replacing it); returns how many.
    pub fn tune_export(&self, path: impl AsRef<Path>) -> Result<u32> {
        let p = path_cstring(path.as_ref())?;
        let mut n = 0u32;
        // SAFETY: a live context, a NUL-terminated path, an out-parameter.
        check(unsafe { sys::tri_tune_export(self.as_raw(), p.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Makes the results of a `tune_export` file this context's answers for their keys (ahead
    /// of stored ones); returns how many were imported. A damaged file imports nothing
    /// (`ErrorKind::CorruptBinary`).
    pub fn tune_import(&self, path: impl AsRef<Path>) -> Result<u32> {
        let p = path_cstring(path.as_ref())?;
        let mut n = 0u32;
        // SAFETY: as for tune_export.
        check(unsafe { sys::tri_tune_import(self.as_raw(), p.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// One tuning counter.
    pub fn tune_stat(&self, stat: TuneStat) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: a live context; out-parameter.
        check(unsafe { sys::tri_tune_stat(self.as_raw(), stat.raw(), &mut v) })?;
        Ok(v)
    }

    pub fn tune_stats(&self) -> Result<TuneStats> {
        Ok(TuneStats {
            trials: self.tune_stat(TuneStat::Trials)?,
            stored: self.tune_stat(TuneStat::Stored)?,
            defaults: self.tune_stat(TuneStat::Defaults)?,
            pruned: self.tune_stat(TuneStat::Pruned)?,
            other_device: self.tune_stat(TuneStat::OtherDevice)?,
        })
    }
}
