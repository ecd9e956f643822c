// CUDA devices as the "cuda" target sees them (tri_device_*), and the two things GPU launches
// take that the crate does not own: device pointers and streams. Without a loadable driver every
// query is `ErrorKind::Unsupported` with the library's reason; with a driver and no GPU the count
// is 0.

use std::ptr;

use tri_sys as sys;

use crate::context::Context;
use crate::error::{check, Error, Result};

/// A CUDA device pointer (`CUdeviceptr`): memory on the GPU, from `cuMemAlloc`, a CUDA library
/// or another framework. The crate never dereferences it; launches of "cuda" kernels pass it
/// with `Arg::device`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    pub const NULL: DevicePtr = DevicePtr(0);

    /// The address `bytes` further on.
    pub fn offset(self, bytes: u64) -> DevicePtr {
        DevicePtr(self.0 + bytes)
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

/// A CUDA stream handle (`CUstream`) as the C API takes it; null is the default stream. Host
/// targets take only null.
pub type Stream = *mut std::ffi::c_void;

/// What `Context::device_attribute` reads (`TRI_DEVICE_ATTR_*`); sizes in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceAttr {
    ComputeCapabilityMajor,
    ComputeCapabilityMinor,
    SmCount,
    SharedPerBlock,
    SharedPerBlockOptin,
    SharedPerSm,
    L2Size,
    MaxThreadsPerBlock,
    WarpSize,
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor (12040 = 12.4).
    DriverVersion,
    /// The highest PTX ISA the driver accepts: 10 * major + minor (84 = 8.4).
    MaxPtxVersion,
}

impl DeviceAttr {
    pub const ALL: [DeviceAttr; 11] = [
        DeviceAttr::ComputeCapabilityMajor,
        DeviceAttr::ComputeCapabilityMinor,
        DeviceAttr::SmCount,
        DeviceAttr::SharedPerBlock,
        DeviceAttr::SharedPerBlockOptin,
        DeviceAttr::SharedPerSm,
        DeviceAttr::L2Size,
        DeviceAttr::MaxThreadsPerBlock,
        DeviceAttr::WarpSize,
        DeviceAttr::DriverVersion,
        DeviceAttr::MaxPtxVersion,
    ];

    pub fn raw(self) -> i32 {
        match self {
            DeviceAttr::ComputeCapabilityMajor => sys::TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR,
            DeviceAttr::ComputeCapabilityMinor => sys::TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR,
            DeviceAttr::SmCount => sys::TRI_DEVICE_ATTR_SM_COUNT,
            DeviceAttr::SharedPerBlock => sys::TRI_DEVICE_ATTR_SHARED_PER_BLOCK,
            DeviceAttr::SharedPerBlockOptin => sys::TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN,
            DeviceAttr::SharedPerSm => sys::TRI_DEVICE_ATTR_SHARED_PER_SM,
            DeviceAttr::L2Size => sys::TRI_DEVICE_ATTR_L2_SIZE,
            DeviceAttr::MaxThreadsPerBlock => sys::TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK,
            DeviceAttr::WarpSize => sys::TRI_DEVICE_ATTR_WARP_SIZE,
            DeviceAttr::DriverVersion => sys::TRI_DEVICE_ATTR_DRIVER_VERSION,
            DeviceAttr::MaxPtxVersion => sys::TRI_DEVICE_ATTR_MAX_PTX_VERSION,
        }
    }
}

/// A CUDA device with its attributes (`Context::device`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub index: u32,
    pub name: String,
    pub compute_capability: (u32, u32),
    pub sm_count: u32,
    pub shared_per_block: u64,
    pub shared_per_block_optin: u64,
    pub shared_per_sm: u64,
    pub l2_size: u64,
    pub max_threads_per_block: u32,
    pub warp_size: u32,
    pub driver_version: u32,
    pub max_ptx_version: u32,
}

impl Device {
    /// The architecture's name for `CompileOptionsBuilder::arch` ("sm_90").
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }
}

fn narrow<T: TryFrom<i64>>(value: i64, what: DeviceAttr) -> Result<T> {
    T::try_from(value).map_err(|_| {
        Error::new(sys::TRI_ERROR_INTERNAL, format!("device attribute {:?} is {}, out of range", what, value))
    })
}

impl Context {
    /// How many CUDA devices the driver sees (0 with a driver and no GPU).
    /// `ErrorKind::Unsupported`, with the reason, when no CUDA driver can be loaded.
    pub fn device_count(&self) -> Result<u32> {
        let mut n = 0u32;
        // SAFETY: a live context; out-parameter.
        check(unsafe { sys::tri_device_count(self.as_raw(), &mut n) })?;
        Ok(n)
    }

    /// One attribute of device `device` (0-based, as the driver numbers them).
    pub fn device_attribute(&self, device: u32, attr: DeviceAttr) -> Result<i64> {
        let mut v = 0i64;
        // SAFETY: a live context; out-parameter.
        check(unsafe { sys::tri_device_attribute(self.as_raw(), device, attr.raw(), &mut v) })?;
        Ok(v)
    }

    /// The device's name ("NVIDIA H100 80GB HBM3").
    pub fn device_name(&self, device: u32) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: capacity 0 with a null buffer asks for the size; then a buffer of that size.
        check(unsafe { sys::tri_device_name(self.as_raw(), device, ptr::null_mut(), 0, &mut size) })?;
        let mut buf = vec![0u8; size.max(1)];
        check(unsafe {
            sys::tri_device_name(self.as_raw(), device, buf.as_mut_ptr() as *mut sys::c_char, buf.len(), &mut size)
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Device `device` with every attribute.
    pub fn device(&self, device: u32) -> Result<Device> {
        let a = |attr| self.device_attribute(device, attr);
        use DeviceAttr::*;
        Ok(Device {
            index: device,
            name: self.device_name(device)?,
            compute_capability: (
                narrow(a(ComputeCapabilityMajor)?, ComputeCapabilityMajor)?,
                narrow(a(ComputeCapabilityMinor)?, ComputeCapabilityMinor)?,
            ),
            sm_count: narrow(a(SmCount)?, SmCount)?,
            shared_per_block: narrow(a(SharedPerBlock)?, SharedPerBlock)?,
            shared_per_block_optin: narrow(a(SharedPerBlockOptin)?, SharedPerBlockOptin)?,
            shared_per_sm: narrow(a(SharedPerSm)?, SharedPerSm)?,
            l2_size: narrow(a(L2Size)?, L2Size)?,
            max_threads_per_block: narrow(a(MaxThreadsPerBlock)?, MaxThreadsPerBlock)?,
            warp_size: narrow(a(WarpSize)?, WarpSize)?,
            driver_version: narrow(a(DriverVersion)?, DriverVersion)?,
            max_ptx_version: narrow(a(MaxPtxVersion)?, MaxPtxVersion)?,
        })
    }

    /// Every CUDA device (empty with a driver and no GPU).
    pub fn devices(&self) -> Result<Vec<Device>> {
        (0..self.device_count()?).map(|i| self.device(i)).collect()
    }
}
