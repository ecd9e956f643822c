// Errors: every failing C call becomes an `Error` carrying the result code and the message the
// library kept for the calling thread; checks this crate makes itself (a launch argument that
// does not match the kernel) use the same codes, so callers match on one type.

use std::ffi::CStr;
use std::fmt;

use tri_sys as sys;

/// What went wrong, from the C API's `TRI_ERROR_*` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    InvalidArgument,
    Parse,
    Verify,
    CorruptBinary,
    UnsupportedVersion,
    NotFound,
    LimitExceeded,
    OutOfMemory,
    Specialize,
    LaunchArgs,
    Unsupported,
    Compile,
    Runtime,
    Io,
    Internal,
    /// A launch stopped by `Context::cancel` (since tri.h 0.2).
    Cancelled,
    /// A code this version of the crate does not know (a newer library).
    Unknown(i32),
}

impl ErrorKind {
    pub fn from_code(code: i32) -> ErrorKind {
        match code {
            sys::TRI_ERROR_INVALID_ARGUMENT => ErrorKind::InvalidArgument,
            sys::TRI_ERROR_PARSE => ErrorKind::Parse,
            sys::TRI_ERROR_VERIFY => ErrorKind::Verify,
            sys::TRI_ERROR_CORRUPT_BINARY => ErrorKind::CorruptBinary,
            sys::TRI_ERROR_UNSUPPORTED_VERSION => ErrorKind::UnsupportedVersion,
            sys::TRI_ERROR_NOT_FOUND => ErrorKind::NotFound,
            sys::TRI_ERROR_LIMIT_EXCEEDED => ErrorKind::LimitExceeded,
            sys::TRI_ERROR_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
            sys::TRI_ERROR_SPECIALIZE => ErrorKind::Specialize,
            sys::TRI_ERROR_LAUNCH_ARGS => ErrorKind::LaunchArgs,
            sys::TRI_ERROR_UNSUPPORTED => ErrorKind::Unsupported,
            sys::TRI_ERROR_COMPILE => ErrorKind::Compile,
            sys::TRI_ERROR_RUNTIME => ErrorKind::Runtime,
            sys::TRI_ERROR_IO => ErrorKind::Io,
            sys::TRI_ERROR_INTERNAL => ErrorKind::Internal,
            sys::TRI_ERROR_CANCELLED => ErrorKind::Cancelled,
            other => ErrorKind::Unknown(other),
        }
    }
}

/// An error from Tri: the result code (`TRI_ERROR_*`) and the message, which names the place
/// ("softmax.tri:12:9: ...", "argument 2 (%out) of kernel @vector_add ...").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: i32,
    message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error made by this crate, with the code the C API would use for it.
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The failed call's error, with the message the library kept for this thread. Must be
    /// called on the thread that made the call, before any other Tri call.
    pub(crate) fn last(code: i32) -> Error {
        Error { code, message: last_error_message() }
    }

    /// The C API's result code (`tri_sys::TRI_ERROR_*`).
    pub fn code(&self) -> i32 {
        self.code
    }

    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_code(self.code)
    }

    /// The code's name, as `tri_result_name` gives it ("TRI_ERROR_PARSE").
    pub fn code_name(&self) -> &'static str {
        result_name(self.code)
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code_name(), self.message)
    }
}

impl std::error::Error for Error {}

/// The name of a result code; the library's strings are static.
pub fn result_name(code: i32) -> &'static str {
    // SAFETY: tri_result_name returns a static NUL-terminated string for every value.
    unsafe { CStr::from_ptr(sys::tri_result_name(code)) }.to_str().unwrap_or("TRI_ERROR_UNKNOWN")
}

/// The calling thread's last error message ("" when no call on this thread has failed).
pub fn last_error_message() -> String {
    // SAFETY: a NULL buffer is allowed with capacity 0; the second call fills `size` bytes.
    unsafe {
        let size = sys::tri_last_error_message(std::ptr::null_mut(), 0);
        let mut buf = vec![0u8; size.max(1)];
        sys::tri_last_error_message(buf.as_mut_ptr() as *mut sys::c_char, buf.len());
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// Turns a result code into `Ok(())` or the thread's error.
pub(crate) fn check(code: sys::tri_result) -> Result<()> {
    if code == sys::TRI_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}
