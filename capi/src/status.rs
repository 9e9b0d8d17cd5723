//! Status codes, the thread-local last error message, and the guard that
//! turns every entry point's result (or panic) into a status code.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The call succeeded.
pub const CLPART_SUCCESS: c_int = 0;
/// A required pointer is NULL, a string is not UTF-8, or a value (shares,
/// device list, buffer aliasing) is invalid.
pub const CLPART_INVALID_ARGUMENT: c_int = -1;
/// The plan or buffer handle is NULL, already released, or not one.
pub const CLPART_INVALID_HANDLE: c_int = -2;
/// The kernel argument index is not below the kernel's argument count.
pub const CLPART_INVALID_ARG_INDEX: c_int = -3;
/// The kernel argument is of another kind (scalar, buffer or __local):
/// the message names the function that sets it.
pub const CLPART_INVALID_ARG_KIND: c_int = -4;
/// A size does not match: a scalar's size differs from the argument's type,
/// a buffer is not a whole number of elements, or a buffer is smaller than
/// the elements the NDRange accesses.
pub const CLPART_SIZE_MISMATCH: c_int = -5;
/// A launch found a kernel argument that was never set.
pub const CLPART_ARGS_NOT_SET: c_int = -6;
/// The work dimension, global, local or offset sizes are invalid (the global
/// size must be a multiple of the local size in every dimension).
pub const CLPART_INVALID_NDRANGE: c_int = -7;
/// No OpenCL device, or a device index or cl_device_id clpart does not know.
pub const CLPART_DEVICE_NOT_FOUND: c_int = -8;
/// The kernel source does not parse, or has no kernel of that name.
pub const CLPART_ANALYSIS_FAILED: c_int = -9;
/// The range file cannot be read, is corrupt, or has no kernel of that name.
pub const CLPART_INVALID_RANGE_FILE: c_int = -10;
/// The OpenCL compiler rejected the kernel (or its subkernel) on a device.
pub const CLPART_BUILD_FAILED: c_int = -11;
/// An OpenCL call failed during the launch.
pub const CLPART_LAUNCH_FAILED: c_int = -12;
/// Verification was on and the split result differs from an unsplit run
/// (the split result is in the host arrays; the message names the array and
/// element).
pub const CLPART_VERIFY_FAILED: c_int = -13;
/// A report was asked for before the plan's first successful launch.
pub const CLPART_NO_REPORT: c_int = -14;
/// A read met elements of a buffer whose last writer, a launch that failed
/// on its device, lost them: they are valid nowhere (write them again).
pub const CLPART_DATA_LOST: c_int = -15;
/// An internal error (a bug in clpart) was caught; the message says where.
pub const CLPART_PANIC: c_int = -99;

/// Every status code with its name, as `clpart_status_name` returns it
/// (static strings, never freed).
pub const STATUS_NAMES: &[(c_int, &std::ffi::CStr)] = &[
    (CLPART_SUCCESS, c"CLPART_SUCCESS"),
    (CLPART_INVALID_ARGUMENT, c"CLPART_INVALID_ARGUMENT"),
    (CLPART_INVALID_HANDLE, c"CLPART_INVALID_HANDLE"),
    (CLPART_INVALID_ARG_INDEX, c"CLPART_INVALID_ARG_INDEX"),
    (CLPART_INVALID_ARG_KIND, c"CLPART_INVALID_ARG_KIND"),
    (CLPART_SIZE_MISMATCH, c"CLPART_SIZE_MISMATCH"),
    (CLPART_ARGS_NOT_SET, c"CLPART_ARGS_NOT_SET"),
    (CLPART_INVALID_NDRANGE, c"CLPART_INVALID_NDRANGE"),
    (CLPART_DEVICE_NOT_FOUND, c"CLPART_DEVICE_NOT_FOUND"),
    (CLPART_ANALYSIS_FAILED, c"CLPART_ANALYSIS_FAILED"),
    (CLPART_INVALID_RANGE_FILE, c"CLPART_INVALID_RANGE_FILE"),
    (CLPART_BUILD_FAILED, c"CLPART_BUILD_FAILED"),
    (CLPART_LAUNCH_FAILED, c"CLPART_LAUNCH_FAILED"),
    (CLPART_VERIFY_FAILED, c"CLPART_VERIFY_FAILED"),
    (CLPART_NO_REPORT, c"CLPART_NO_REPORT"),
    (CLPART_DATA_LOST, c"CLPART_DATA_LOST"),
    (CLPART_PANIC, c"CLPART_PANIC"),
];

/// A failed call: its status code and its one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub(crate) code: c_int,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn new(code: c_int, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }
}

/// Result of the safe side of every entry point.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for an [`Error`].
pub(crate) fn err<T>(code: c_int, message: impl Into<String>) -> Result<T> {
    Err(Error::new(code, message))
}

impl From<launcher::LaunchError> for Error {
    fn from(e: launcher::LaunchError) -> Error {
        use launcher::LaunchError as L;
        let code = match &e {
            L::NoDevices | L::UnknownDevice { .. } => CLPART_DEVICE_NOT_FOUND,
            L::Shares { .. } => CLPART_INVALID_ARGUMENT,
            L::NdRange { .. } => CLPART_INVALID_NDRANGE,
            L::MissingArg { .. } => CLPART_ARGS_NOT_SET,
            L::UnknownArg { .. } | L::DuplicateArg { .. } | L::BadSpec { .. } => {
                CLPART_INVALID_ARGUMENT
            }
            L::MistypedArg { .. } => CLPART_INVALID_ARG_KIND,
            L::BufferTooSmall { .. } | L::GuardOutOfBounds { .. } => CLPART_SIZE_MISMATCH,
            L::LocalTooLarge { .. } => CLPART_INVALID_ARGUMENT,
            L::Build { .. } => CLPART_BUILD_FAILED,
            L::RangeFile { .. } | L::Ranges(_) => CLPART_INVALID_RANGE_FILE,
            _ => CLPART_LAUNCH_FAILED,
        };
        Error::new(code, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Replaces this thread's last error message (nul bytes become spaces).
pub(crate) fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// This thread's last error message; valid until the next call that sets it
/// on this thread (the `CString`'s buffer is replaced, not mutated).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The status name of a code, or `None`.
pub(crate) fn status_cname(code: c_int) -> Option<&'static std::ffi::CStr> {
    STATUS_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| *n)
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs one entry point: its error becomes the status code and this
/// thread's last error, success clears the message, and a panic is caught
/// here (it never unwinds into C) and becomes [`CLPART_PANIC`].
pub(crate) fn guard(f: impl FnOnce() -> Result<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            set_last_error("");
            CLPART_SUCCESS
        }
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.code
        }
        Err(payload) => {
            // formatting the message could itself panic (it does not, but
            // nothing may unwind past this point)
            let message = catch_unwind(AssertUnwindSafe(|| {
                format!(
                    "internal error, a bug in clpart: {}",
                    panic_message(payload.as_ref())
                )
            }))
            .unwrap_or_else(|_| "internal error, a bug in clpart".to_string());
            let _ = catch_unwind(AssertUnwindSafe(|| set_last_error(&message)));
            CLPART_PANIC
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn message() -> String {
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn a_panic_becomes_a_status_code() {
        let code = guard(|| panic!("boom at {}", 42));
        assert_eq!(code, CLPART_PANIC);
        assert_eq!(message(), "internal error, a bug in clpart: boom at 42");
        assert_eq!(guard(|| Ok(())), CLPART_SUCCESS);
        assert_eq!(message(), "");
    }

    #[test]
    fn errors_set_the_thread_message() {
        let code = guard(|| err(CLPART_SIZE_MISMATCH, "a\0b"));
        assert_eq!(code, CLPART_SIZE_MISMATCH);
        assert_eq!(message(), "a b");
        std::thread::spawn(|| assert_eq!(message(), "", "the message is per thread"))
            .join()
            .unwrap();
    }
}
