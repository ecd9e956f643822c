// Prepared launches (tri_launch_plan_*): a kernel bound to a grid, a stream and arguments once,
// for hot loops that change one thing between launches. The plan borrows the host slices it
// holds for 'a, like the `Arg`s it was made from, so they cannot be freed or moved under it.

use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use tri_sys as sys;

use crate::context::Context;
use crate::device::Stream;
use crate::error::{check, Result};
use crate::kernel::{Arg, Grid, Signature};

/// A prepared launch (`Kernel::plan`, `Kernel::plan_on`). It keeps its kernel alive. The C plan
/// is not thread-safe: a `LaunchPlan` may move to another thread (Send) but not be shared (not
/// Sync), and every call takes `&mut self`.
pub struct LaunchPlan<'a> {
    raw: *mut sys::tri_launch_plan,
    sig: Arc<Signature>,
    _ctx: Context,
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: the plan belongs to this value alone and has no thread affinity; the slices it points
// into are borrowed for 'a like a `&'a [u8]` would be, which may cross threads.
unsafe impl Send for LaunchPlan<'_> {}

impl Drop for LaunchPlan<'_> {
    fn drop(&mut self) {
        // SAFETY: made by tri_launch_plan_create, released once.
        unsafe { sys::tri_launch_plan_destroy(self.raw) }
    }
}

impl<'a> LaunchPlan<'a> {
    pub(crate) fn create(
        kernel: *mut sys::tri_kernel,
        sig: Arc<Signature>,
        ctx: Context,
        grid: Grid,
        stream: Stream,
        args: &[sys::tri_arg],
    ) -> Result<LaunchPlan<'a>> {
        let mut raw = ptr::null_mut();
        let Grid(x, y, z) = grid;
        // SAFETY: a live kernel (the caller's), arguments checked against its signature, an
        // out-parameter written on success. The plan keeps the kernel alive.
        check(unsafe {
            sys::tri_launch_plan_create(kernel, x, y, z, stream, args.as_ptr(), args.len() as u32, &mut raw)
        })?;
        Ok(LaunchPlan { raw, sig, _ctx: ctx, _borrow: PhantomData })
    }

    /// The kernel's name.
    pub fn kernel_name(&self) -> &str {
        &self.sig.name
    }

    /// Replaces argument `index`, checked as a launch checks it; a refused one changes nothing.
    pub fn set_arg(&mut self, index: usize, arg: Arg<'a>) -> Result<()> {
        self.sig.check_arg(index, &arg)?;
        // SAFETY: a live plan; the argument is copied.
        check(unsafe { sys::tri_launch_plan_set_arg(self.raw, index as u32, arg.as_raw()) })
    }

    /// Replaces the grid (a zero dimension makes launches empty).
    pub fn set_grid(&mut self, grid: impl Into<Grid>) -> Result<()> {
        let Grid(x, y, z) = grid.into();
        // SAFETY: a live plan.
        check(unsafe { sys::tri_launch_plan_set_grid(self.raw, x, y, z) })
    }

    /// Moves later launches to `stream` (null: the default stream; host targets take only null).
    pub fn set_stream(&mut self, stream: Stream) -> Result<()> {
        // SAFETY: a live plan; the stream is only used by launches.
        check(unsafe { sys::tri_launch_plan_set_stream(self.raw, stream) })
    }

    /// Launches as `Kernel::launch_on` would with the plan's grid, stream and arguments.
    ///
    /// # Safety
    /// As for `Kernel::launch`: the kernel reads and writes through the plan's pointers, and
    /// the stream and device memory must be live.
    pub unsafe fn launch(&mut self) -> Result<()> {
        check(sys::tri_launch_plan_launch(self.raw))
    }

    /// The raw handle, for calls this crate does not wrap. It stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::tri_launch_plan {
        self.raw
    }
}
