// Teams (tri_team_*, docs/distributed.md): one kernel run as several ranks that share a
// symmetric heap. A host team ("cpu", "interp" kernels) is threads of this process with host
// memory as the heaps; a GPU team is one process per GPU on NVSHMEM, joined from a `TeamId`.
// A `Team` holds a clone of its `Context` (the C team keeps its context alive), and launches
// borrow the team, so Drop, which destroys it, cannot run while one of them is running.

use std::ptr;
use std::time::Duration;

use tri_sys as sys;

use crate::context::Context;
use crate::device::Stream;
use crate::error::{check, Error, Result};
use crate::kernel::{with_raw_args, Arg, Element, Grid, Kernel, Space};

/// The size of a GPU team's unique id (`TRI_TEAM_ID_BYTES`).
pub const TEAM_ID_BYTES: usize = sys::TRI_TEAM_ID_BYTES as usize;

/// The unique id of a GPU team (`Team::make_id`): plain bytes, which rank 0's process sends to
/// the other ranks' processes by any means (a pipe, a file, a socket) for `Team::join`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TeamId([u8; TEAM_ID_BYTES]);

impl TeamId {
    /// The id's bytes, to send to the other ranks.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// An id received from rank 0; `ErrorKind::InvalidArgument` unless it is `TEAM_ID_BYTES`
    /// bytes long.
    pub fn from_bytes(bytes: &[u8]) -> Result<TeamId> {
        if bytes.len() != TEAM_ID_BYTES {
            return Err(Error::new(
                sys::TRI_ERROR_INVALID_ARGUMENT,
                format!("a team id is {} bytes, but {} were given", TEAM_ID_BYTES, bytes.len()),
            ));
        }
        let mut id = [0u8; TEAM_ID_BYTES];
        id.copy_from_slice(bytes);
        Ok(TeamId(id))
    }
}

/// A team of ranks sharing a symmetric heap: every rank owns a heap of the same size, and
/// `alloc` places a buffer at the same offset of every rank's heap, so one offset names the
/// same buffer on every rank (the IR's `symm_at`, `put`, `get`, `notify` and `wait` reach a
/// peer's copy).
///
/// A host team (`Team::new`) runs "cpu" and "interp" kernels with every rank in this process;
/// its heaps are host memory the host reads and writes (`write`, `read`, `ptr`). A GPU team
/// (`Team::join`) is this process's rank of a team of processes, one per GPU, over NVSHMEM; its
/// heaps are device memory, and `alloc`, `free` and dropping the team are collective (every rank
/// makes the same calls in the same order).
///
/// The team is released by Drop (`tri_team_destroy`); pointers from `ptr` are invalid after it.
/// It keeps its context alive. tri.h allows using a team from many threads at once, so `Team`
/// is `Send + Sync`.
pub struct Team {
    raw: *mut sys::tri_team,
    rank: u32,
    num_ranks: u32,
    heap_bytes: u64,
    gpu: bool,
    _ctx: Context,
}

// SAFETY: tri.h: "A team may be used from many threads at once", and it has no thread affinity
// (a GPU team's calls make the context current on the calling thread). The Rust fields are
// immutable after creation.
unsafe impl Send for Team {}
// SAFETY: see Send.
unsafe impl Sync for Team {}

impl Drop for Team {
    fn drop(&mut self) {
        // SAFETY: made by tri_team_create or tri_team_join, released once. No launch can be
        // running: each borrows the team. (A GPU team's launch_async work must be finished, see
        // `launch_async`.)
        unsafe { sys::tri_team_destroy(self.raw) }
    }
}

/// Rounds a heap size up to a multiple of 64, as the library does.
fn heap_size(bytes: u64) -> u64 {
    bytes.checked_add(63).map(|b| b / 64 * 64).unwrap_or(u64::MAX)
}

impl Team {
    /// Takes ownership of `raw` (released on every path, errors included) and reads its rank.
    fn adopt(ctx: &Context, raw: *mut sys::tri_team, heap_bytes_per_rank: u64, gpu: bool) -> Result<Team> {
        let mut team =
            Team { raw, rank: 0, num_ranks: 0, heap_bytes: heap_size(heap_bytes_per_rank), gpu, _ctx: ctx.clone() };
        // SAFETY: a live team; out-parameters.
        check(unsafe { sys::tri_team_rank(team.raw, &mut team.rank, &mut team.num_ranks) })?;
        Ok(team)
    }

    /// A host team of `num_ranks` ranks (1 to 1024), each with a symmetric heap of
    /// `heap_bytes_per_rank` bytes (rounded up to a multiple of 64) of host memory from the
    /// context's allocator. Waits time out after 30 s (`set_wait_timeout`). Errors:
    /// `InvalidArgument` (a count or size of 0), `LimitExceeded` (more than 1024 ranks, heaps
    /// past the address space), `OutOfMemory`.
    pub fn new(ctx: &Context, num_ranks: u32, heap_bytes_per_rank: u64) -> Result<Team> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live context; out-parameter written on success.
        check(unsafe { sys::tri_team_create(ctx.as_raw(), num_ranks, heap_bytes_per_rank, &mut raw) })?;
        Team::adopt(ctx, raw, heap_bytes_per_rank, false)
    }

    /// Makes the unique id of a new GPU team. The process that makes it must join the team as
    /// rank 0 and send the id to the other ranks' processes. `ErrorKind::Unsupported` when
    /// NVSHMEM cannot be loaded (the message says how to point Tri at it, `$TRI_NVSHMEM_LIB`).
    pub fn make_id(ctx: &Context) -> Result<TeamId> {
        let mut id = [0u8; TEAM_ID_BYTES];
        // SAFETY: a live context; the buffer holds TEAM_ID_BYTES bytes.
        check(unsafe { sys::tri_team_make_id(ctx.as_raw(), id.as_mut_ptr() as *mut sys::c_void, id.len()) })?;
        Ok(TeamId(id))
    }

    /// Joins the GPU team of `id` as rank `rank` of `num_ranks`, on CUDA device `device`
    /// (0-based), whose primary context becomes current on the calling thread; each rank's heap
    /// is `heap_bytes_per_rank` bytes (rounded up to 64) of that GPU's memory, zeroed. Blocks
    /// until every rank has joined. One GPU team per process at a time. Errors: `Unsupported`
    /// (no driver, no NVSHMEM, peers not reachable by load and store, a second team in this
    /// process), `InvalidArgument` (a rank past `num_ranks`, a device past the count),
    /// `OutOfMemory`, `Runtime` (NVSHMEM's bootstrap failed). Dropping the team is collective.
    pub fn join(
        ctx: &Context,
        id: &TeamId,
        rank: u32,
        num_ranks: u32,
        device: u32,
        heap_bytes_per_rank: u64,
    ) -> Result<Team> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live context; the id is TEAM_ID_BYTES bytes; out-parameter written on success.
        check(unsafe {
            sys::tri_team_join(
                ctx.as_raw(),
                id.0.as_ptr() as *const sys::c_void,
                id.0.len(),
                rank,
                num_ranks,
                device,
                heap_bytes_per_rank,
                &mut raw,
            )
        })?;
        Team::adopt(ctx, raw, heap_bytes_per_rank, true)
    }

    /// This process's rank (`tri_team_rank`): 0 in a host team, whose ranks all run here.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// How many ranks the team has.
    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }

    /// The size of each rank's heap in bytes (as asked, rounded up to a multiple of 64).
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes
    }

    /// Whether this is a GPU team (`join`), whose heaps are device memory.
    pub fn is_gpu(&self) -> bool {
        self.gpu
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_team {
        self.raw
    }

    /// Allocates `bytes` (more than 0) in every rank's heap at one offset, 64-byte aligned and
    /// zeroed, and returns the offset (first fit: the lowest that fits). `ErrorKind::OutOfMemory`
    /// when no free range of that size is left (the message says how much is free). Collective
    /// in a GPU team.
    pub fn alloc(&self, bytes: u64) -> Result<u64> {
        let mut offset = 0u64;
        // SAFETY: a live team (thread-safe); out-parameter.
        check(unsafe { sys::tri_team_alloc(self.raw, bytes, &mut offset) })?;
        Ok(offset)
    }

    /// Frees the allocation at `offset` (from `alloc`) on every rank; `ErrorKind::InvalidArgument`
    /// for an offset that is not an allocation's. Collective in a GPU team.
    pub fn free(&self, offset: u64) -> Result<()> {
        // SAFETY: a live team (thread-safe).
        check(unsafe { sys::tri_team_free(self.raw, offset) })
    }

    /// The address of byte `offset` of rank `rank`'s heap: host memory in a host team (for the
    /// host to fill and read, and rank `rank`'s kernel argument), a device address on this GPU
    /// in a GPU team (a peer's as mapped here). Valid until the team is dropped.
    /// `ErrorKind::InvalidArgument` for a rank past the team or an offset past the heap.
    pub fn ptr(&self, rank: u32, offset: u64) -> Result<*mut std::ffi::c_void> {
        let mut p = ptr::null_mut();
        // SAFETY: a live team; out-parameter.
        check(unsafe { sys::tri_team_ptr(self.raw, rank, offset, &mut p) })?;
        Ok(p as *mut std::ffi::c_void)
    }

    /// `len` elements of `T` at byte `offset` of rank `rank`'s heap, checked to lie within the
    /// heap, and the address of the first.
    fn span<T: Element>(&self, rank: u32, offset: u64, len: usize) -> Result<(*mut std::ffi::c_void, u64)> {
        let bytes = (len as u64).checked_mul(std::mem::size_of::<T>() as u64);
        match bytes.and_then(|b| offset.checked_add(b)) {
            Some(end) if end <= self.heap_bytes => Ok((self.ptr(rank, offset)?, bytes.unwrap_or(0))),
            _ => Err(Error::new(
                sys::TRI_ERROR_INVALID_ARGUMENT,
                format!(
                    "{} elements of {} at offset {} run past the end of a rank's heap of {} bytes",
                    len,
                    T::DTYPE.name(),
                    offset,
                    self.heap_bytes
                ),
            )),
        }
    }

    /// A launch argument for `len` elements of `T` at byte `offset` of rank `rank`'s heap: a
    /// host buffer in a host team, a device buffer in a GPU team. It borrows the team, so the
    /// team outlives it. Errors as for `ptr`, and `InvalidArgument` when the elements run past
    /// the heap.
    pub fn arg<T: Element>(&self, rank: u32, offset: u64, len: usize) -> Result<Arg<'_>> {
        let (p, bytes) = self.span::<T>(rank, offset, len)?;
        let space = if self.gpu { Space::Device } else { Space::Host };
        Ok(Arg::pointer(p as *const sys::c_void, bytes, T::DTYPE, space))
    }

    /// The host teams' memory is host memory; a GPU team's is not.
    fn host_only(&self, what: &str) -> Result<()> {
        if self.gpu {
            return Err(Error::new(
                sys::TRI_ERROR_INVALID_ARGUMENT,
                format!("Team::{} reads and writes host memory; a GPU team's heaps are device memory", what),
            ));
        }
        Ok(())
    }

    /// Copies `data` into rank `rank`'s heap at byte `offset` (host teams only;
    /// `ErrorKind::InvalidArgument` for a GPU team, a rank past the team, or data past the heap).
    /// A launch of the team that uses this memory must not be running (see `launch`).
    pub fn write<T: Element>(&self, rank: u32, offset: u64, data: &[T]) -> Result<()> {
        self.host_only("write")?;
        let (p, _) = self.span::<T>(rank, offset, data.len())?;
        // SAFETY: the range lies within rank `rank`'s heap of host memory, which lives as long as
        // the team; `launch`'s contract excludes a kernel touching it at the same time.
        unsafe { ptr::copy_nonoverlapping(data.as_ptr() as *const u8, p as *mut u8, std::mem::size_of_val(data)) };
        Ok(())
    }

    /// Copies `out.len()` elements from rank `rank`'s heap at byte `offset` into `out` (host
    /// teams only; errors as for `write`).
    pub fn read<T: Element>(&self, rank: u32, offset: u64, out: &mut [T]) -> Result<()> {
        self.host_only("read")?;
        let (p, _) = self.span::<T>(rank, offset, out.len())?;
        // SAFETY: as for `write`; every bit pattern is a valid `Element` (integers and floats).
        unsafe { ptr::copy_nonoverlapping(p as *const u8, out.as_mut_ptr() as *mut u8, std::mem::size_of_val(out)) };
        Ok(())
    }

    /// How long a `wait` of this team's launches may go without its signal before the launch
    /// fails with `ErrorKind::Runtime` naming the wait; `Duration::ZERO` waits forever. Counted
    /// in whole milliseconds (a shorter nonzero duration is 1 ms). The default is 30 s. Launches
    /// that begin later use it.
    pub fn set_wait_timeout(&self, timeout: Duration) -> Result<()> {
        let ms = timeout.as_millis();
        let ms = if ms == 0 && !timeout.is_zero() { 1 } else { u64::try_from(ms).unwrap_or(u64::MAX) };
        // SAFETY: a live team (thread-safe).
        check(unsafe { sys::tri_team_set_wait_timeout(self.raw, ms) })
    }

    /// Runs `kernel` on every rank of a host team, each over `grid`, all ranks at once, and
    /// returns when every rank has finished. `args` holds one argument list per rank (rank 0's
    /// first), each checked against the kernel's parameters like `Kernel::launch`; a rank's
    /// buffers are usually its own heap's (`arg(rank, ...)`). In a GPU team `args` holds this
    /// process's rank's list only, and the call returns when its kernel has finished.
    ///
    /// A failure on any rank stops the waits of the others and is reported with its rank
    /// ("rank 2: file:line:col: error: ..."). Errors: those of `Kernel::launch`, `LaunchArgs`
    /// (a list per rank missing or wrong), `InvalidArgument` (a "cuda" kernel on a host team,
    /// a host kernel on a GPU team), `LimitExceeded` (a kernel with `wait`
    /// whose ranks have more than 1024 program instances in all), `Runtime` (a wait timed out, a
    /// rank or address outside the team's heaps, a failed assert). Thread-safe.
    ///
    /// # Safety
    /// As for `Kernel::launch`: the kernel reads and writes through its pointers and, through
    /// `symm_at`, `put` and `notify`, through the peers' heaps. No other thread may read or write
    /// (`read`, `write`, `ptr`) the team's memory the kernel writes while it runs.
    pub unsafe fn launch<'a, A: AsRef<[Arg<'a>]>>(
        &self,
        kernel: &Kernel,
        grid: impl Into<Grid>,
        args: &[A],
    ) -> Result<()> {
        let sig = kernel.signature();
        let device = sig.on_device()?;
        if device != self.gpu {
            // The code the library gives a kernel of the other kind of team (tri_team_launch).
            let message = if self.gpu {
                "a GPU team (Team::join) runs \"cuda\" kernels"
            } else {
                "a host team (Team::new) runs \"cpu\" and \"interp\" kernels; \"cuda\" kernels run in GPU teams"
            };
            return Err(Error::new(
                sys::TRI_ERROR_INVALID_ARGUMENT,
                format!("kernel @{} was compiled for target \"{}\"; {}", sig.name, sig.target, message),
            ));
        }
        let lists = if self.gpu { 1 } else { self.num_ranks as usize };
        if args.len() != lists {
            let message = if self.gpu {
                format!("a GPU team's launch takes this rank's argument list only, but {} lists were given", args.len())
            } else {
                format!(
                    "a launch of kernel @{} on a team of {} ranks takes one argument list per rank, but {} were given",
                    sig.name,
                    self.num_ranks,
                    args.len()
                )
            };
            return Err(Error::new(sys::TRI_ERROR_LAUNCH_ARGS, message));
        }
        let mut raw = Vec::with_capacity(lists * sig.len());
        for (i, list) in args.iter().enumerate() {
            let list = list.as_ref();
            let rank = if self.gpu { self.rank } else { i as u32 };
            sig.check_args(list).map_err(|e| Error::new(e.code(), format!("rank {}: {}", rank, e.message())))?;
            raw.extend(list.iter().map(|a| *a.as_raw()));
        }
        let Grid(x, y, z) = grid.into();
        check(sys::tri_team_launch(kernel.as_raw(), self.raw, x, y, z, raw.as_ptr(), sig.len() as u32))
    }

    /// Queues this process's rank of a GPU team's `kernel` on `stream` (a `CUstream`; null: the
    /// default stream of the team's context) with this rank's `args`, and returns without waiting,
    /// as `Kernel::launch_on` does; `barrier` waits for it. Errors: those of `Kernel::launch_on`,
    /// and the library's `InvalidArgument` for a host team or a kernel not compiled for "cuda".
    ///
    /// # Safety
    /// As for `Kernel::launch_on`; the team's memory must not be freed (`free`, Drop) before the
    /// kernel has finished (`barrier`).
    pub unsafe fn launch_async(
        &self,
        kernel: &Kernel,
        stream: Stream,
        grid: impl Into<Grid>,
        args: &[Arg],
    ) -> Result<()> {
        kernel.check_args(args)?;
        let Grid(x, y, z) = grid.into();
        with_raw_args(args, |raw| {
            check(sys::tri_team_launch_async(kernel.as_raw(), self.raw, x, y, z, raw.as_ptr(), raw.len() as u32, stream))
        })
    }

    /// Waits until this rank's GPU work is done and every rank of the team has called it; a host
    /// team returns at once. `ErrorKind::Runtime` when a kernel of this rank failed.
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a live team.
        check(unsafe { sys::tri_team_barrier(self.raw) })
    }
}
