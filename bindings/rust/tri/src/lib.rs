//! Safe Rust bindings of Tri, an embeddable JIT runtime for block-level kernels, on its C API
//! (`tri-sys`). A [`Context`] reads IR into a [`Module`]; a module compiles a kernel for a target
//! (the CPU, the interpreter, or CUDA GPUs) into a [`Kernel`] with [`CompileOptions`]; a kernel
//! launches over a grid with [`Arg`]s (slices on the host targets, [`DevicePtr`]s on "cuda",
//! queued on a [`Stream`]), which are checked against its reflected signature before the call,
//! or through a prepared [`LaunchPlan`]. A module also autotunes a kernel over a [`TuneSpace`]
//! of configs (`Module::tune`), giving the fastest compiled. A [`Team`] runs one kernel as
//! several ranks that share a symmetric heap (distributed kernels: threads of this process on
//! the host targets, one process per GPU on NVSHMEM). The context also lists CUDA devices,
//! looks after the disk cache of compiled kernels, and exports and imports tuning results. Every failure is an [`Error`] with the C API's result code
//! and message. Handles are released by Drop, in any order: a child keeps its parent alive, as in
//! the C API.
//!
//! ```no_run
//! use tri::{Arg, CompileOptions, Context, Module, Target};
//! # fn main() -> tri::Result<()> {
//! let ctx = Context::new()?;
//! let module = Module::from_file(&ctx, "examples/vector_add.tri")?;
//! let options = CompileOptions::builder().target(Target::Cpu).constexpr_int("BLOCK", 1024).build()?;
//! let kernel = module.compile("vector_add", &options)?;
//! let (x, y) = (vec![1.0f32; 5000], vec![2.0f32; 5000]);
//! let mut out = vec![0.0f32; 5000];
//! let n = x.len() as i32;
//! // SAFETY: vector_add stays within n elements and writes only `out`.
//! unsafe { kernel.launch((n as u32 + 1023) / 1024, &[Arg::slice(&x), Arg::slice(&y), Arg::slice_mut(&mut out), Arg::i32(n)])? };
//! # Ok(()) }
//! ```
//!
//! Using a released handle cannot compile: `Drop` consumes it.
//!
//! ```compile_fail
//! # fn main() -> tri::Result<()> {
//! let ctx = tri::Context::new()?;
//! let module = tri::Module::new(&ctx, b"kernel @k() {\n  return\n}\n", "k.tri")?;
//! drop(module);
//! let text = module.to_text()?; // error: use of moved value
//! # Ok(()) }
//! ```
//!
//! Compile options may move between threads but not be shared (tri.h: options objects are not
//! thread-safe):
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<tri::CompileOptions>(); // error: CompileOptions is not Sync
//! ```
//!
//! A buffer cannot change while a launch argument borrows it:
//!
//! ```compile_fail
//! let mut out = vec![0.0f32; 4];
//! let arg = tri::Arg::slice_mut(&mut out);
//! out.push(1.0); // error: `out` is borrowed by `arg`
//! let _ = arg;
//! ```
//!
//! nor while a launch plan holds it:
//!
//! ```compile_fail
//! # fn main() -> tri::Result<()> {
//! # let ctx = tri::Context::new()?;
//! # let module = tri::Module::from_file(&ctx, "examples/vector_add.tri")?;
//! # let kernel = module.compile("vector_add", &tri::CompileOptions::new()?)?;
//! let (x, mut out) = (vec![1.0f32; 4], vec![0.0f32; 4]);
//! let mut plan = kernel.plan(1, &[tri::Arg::slice(&x), tri::Arg::slice(&x), tri::Arg::slice_mut(&mut out), tri::Arg::i32(4)])?;
//! drop(out); // error: `out` is borrowed by the plan
//! unsafe { plan.launch()? };
//! # Ok(()) }
//! ```
//!
//! A team outlives the launch arguments made from its heaps (dropping it frees them):
//!
//! ```compile_fail
//! # fn main() -> tri::Result<()> {
//! let ctx = tri::Context::new()?;
//! let team = tri::Team::new(&ctx, 2, 1024)?;
//! let buf = team.alloc(64)?;
//! let arg = team.arg::<f32>(0, buf, 16)?;
//! drop(team); // error: `team` is borrowed by `arg`
//! let _ = arg;
//! # Ok(()) }
//! ```
//!
//! A plan is used from one thread at a time (tri.h: plans are not thread-safe):
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<tri::LaunchPlan<'static>>(); // error: LaunchPlan is not Sync
//! ```

#[cfg(not(feature = "runtime-only"))]
mod cache;
mod context;
mod device;
mod error;
#[cfg_attr(feature = "runtime-only", allow(dead_code))] // the tuner's and the cache's
mod json;
mod kernel;
mod module;
mod plan;
mod team;
#[cfg(not(feature = "runtime-only"))]
mod tune;

#[cfg(not(feature = "runtime-only"))]
pub use cache::{CacheEntry, CacheStat, CacheStats};
pub use context::{version, Context, ContextBuilder, HostAllocator, LogLevel};
pub use device::{Device, DeviceAttr, DevicePtr, Stream};
pub use error::{last_error_message, result_name, Error, ErrorKind, Result};
pub use kernel::{Arg, CompileOptions, CompileOptionsBuilder, Element, Grid, Kernel, Target};
pub use module::{Blob, DType, Function, FunctionKind, Module, Param, ParamKind, TypeKind};
pub use plan::LaunchPlan;
pub use team::{Team, TeamId, TEAM_ID_BYTES};
#[cfg(not(feature = "runtime-only"))]
pub use tune::{
    tune_svg, TuneConfig, TuneFlags, TuneGrid, TuneProduct, TuneProgress, TuneSpace, TuneStage, TuneStat, TuneStats,
    TuneTrial, Tuned,
};

/// The raw C API, for what this crate does not wrap.
pub use tri_sys as sys;

// The README's program runs as a doctest, so the README cannot drift from the API.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
