//! The launcher's error type.
//!
//! Every message is one line, lower case, without a trailing period, and names
//! the argument, array or device it is about.

use std::path::PathBuf;

/// Everything that can go wrong while enumerating devices, preparing arguments,
/// building programs and launching kernels.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// An OpenCL call failed.
    #[error("opencl error {code} in {call}{}", on_device(.device))]
    OpenCl {
        /// The failing API call, e.g. `clEnqueueWriteBuffer`.
        call: &'static str,
        /// The error code's name, e.g. `CL_OUT_OF_RESOURCES`.
        code: String,
        /// `device N ('name')` when the call concerned one device.
        device: Option<String>,
    },
    /// No OpenCL platform or device is visible.
    #[error("no OpenCL device found (is an ICD installed? try POCL_DEVICES=\"pthread basic\")")]
    NoDevices,
    /// A device index that does not exist.
    #[error("unknown device {index} (valid devices: {valid})")]
    UnknownDevice {
        /// The requested index.
        index: usize,
        /// The valid indices, e.g. `0, 1`.
        valid: String,
    },
    /// A launch over a work-group window (an MPI rank's slice,
    /// `Plan::set_group_window`) that cannot run split there.
    #[error("kernel '{kernel}' cannot run work-groups [{lo}, {hi}) alone: {reason}")]
    Window {
        /// The kernel.
        kernel: String,
        /// The window's first work-group.
        lo: u64,
        /// One past its last work-group.
        hi: u64,
        /// Why not (the window leaves the NDRange, or the launch would run unsplit).
        reason: String,
    },
    /// The split shares are malformed.
    #[error("invalid shares: {message}")]
    Shares {
        /// What is wrong, naming the offending share.
        message: String,
    },
    /// The NDRange is malformed or does not fit the kernel.
    #[error("invalid ndrange: {message}")]
    NdRange {
        /// What is wrong.
        message: String,
    },
    /// A `NAME=SPEC` argument names no kernel argument.
    #[error("unknown argument '{name}' for kernel '{kernel}' (valid arguments: {valid})")]
    UnknownArg {
        /// The name given.
        name: String,
        /// The kernel.
        kernel: String,
        /// The kernel's argument names.
        valid: String,
    },
    /// A kernel argument got no value.
    #[error("missing argument '{name}' for kernel '{kernel}' (give it as {name}=SPEC)")]
    MissingArg {
        /// The argument without a value.
        name: String,
        /// The kernel.
        kernel: String,
    },
    /// An argument was given twice.
    #[error("argument '{name}' is given twice")]
    DuplicateArg {
        /// The argument.
        name: String,
    },
    /// An argument spec is malformed (syntax).
    #[error("invalid argument spec '{spec}': {message}")]
    BadSpec {
        /// The spec text as given.
        spec: String,
        /// What is wrong, listing the valid choices.
        message: String,
    },
    /// An argument spec does not fit the argument's kind or type.
    #[error("argument '{name}' ({ty}): {message}")]
    MistypedArg {
        /// The argument.
        name: String,
        /// Its kind and type, e.g. `__global float*`.
        ty: String,
        /// What is wrong.
        message: String,
    },
    /// A `.npy` file cannot be read or does not fit the argument.
    #[error("{}: {message}", .path.display())]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file system operation failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A buffer is smaller than the elements the NDRange accesses.
    #[error("argument '{array}' is too small for this ndrange: the kernel accesses elements {lower}..={upper} but the buffer holds {len}")]
    BufferTooSmall {
        /// The array argument.
        array: String,
        /// Lowest element index accessed.
        lower: i64,
        /// Highest element index accessed.
        upper: i64,
        /// Elements in the host buffer.
        len: u64,
    },
    /// Building a program failed on a device.
    #[error("build of kernel '{kernel}' failed on device {device}: {first_line}")]
    Build {
        /// The kernel (or subkernel) whose program failed.
        kernel: String,
        /// `N ('name')`.
        device: String,
        /// The first non-empty line of the build log.
        first_line: String,
        /// The whole build log.
        log: String,
    },
    /// The range file is inconsistent or its expressions do not parse.
    #[error("range file, kernel '{kernel}': {message}")]
    RangeFile {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// The range file entry fails its own validation.
    #[error(transparent)]
    Ranges(#[from] ranges_format::RangesError),
    /// An expression of the range file could not be evaluated for this launch.
    #[error("kernel '{kernel}': cannot evaluate {what}: {message}")]
    Eval {
        /// The kernel.
        kernel: String,
        /// Which expression, e.g. `total range of array 'a'`.
        what: String,
        /// Why.
        message: String,
    },
    /// The run-time guard caught an access outside the host buffer of an
    /// array (or outside a `__local` argument) in an unsplit run: the kernel
    /// needs a larger buffer. Nothing was written back.
    #[error("kernel '{kernel}' accesses {what} '{array}' outside its {len} elements (caught by the run-time guard; nothing was written back)")]
    GuardOutOfBounds {
        /// The kernel.
        kernel: String,
        /// `array` or `__local argument`.
        what: &'static str,
        /// The argument.
        array: String,
        /// Elements it holds.
        len: u64,
    },
    /// A launch is larger than a device can run (its work-group size, its
    /// work-item sizes, its `size_t`, its largest buffer, or the counts
    /// the launcher allows: [`crate::ndrange::MAX_WORK_ITEMS`]).
    #[error("{what} exceeds what device {device} can run: {limit}")]
    BeyondDevice {
        /// What is too large, and where ("global size 4294967296 in
        /// dimension 0").
        what: String,
        /// `N ('name')`.
        device: String,
        /// The limit ("at most 4294967295 work-items").
        limit: String,
    },
    /// A `__local` argument is larger than a device's local memory.
    #[error("__local argument '{name}' needs {bytes} bytes, more than the {limit} bytes of local memory of device {device}")]
    LocalTooLarge {
        /// The argument.
        name: String,
        /// Bytes asked for.
        bytes: u64,
        /// `N ('name')`.
        device: String,
        /// `CL_DEVICE_LOCAL_MEM_SIZE`.
        limit: u64,
    },
    /// Host memory for a buffer could not be had.
    #[error("argument '{name}': cannot allocate {bytes} bytes of host memory")]
    Alloc {
        /// The argument.
        name: String,
        /// Bytes asked for.
        bytes: u64,
    },
    /// A host copy would reach outside its host or device buffer (a range
    /// file whose sizes or ranges do not fit the real buffers); nothing was
    /// copied.
    #[error("refused {op} of {len} bytes at offset {offset}: outside the {what} buffer of {size} bytes{}", on_device(.device))]
    CopyOutOfBounds {
        /// `host-to-device copy` or `device-to-host copy`.
        op: &'static str,
        /// `host` or `device`.
        what: &'static str,
        /// Byte offset into that buffer.
        offset: u64,
        /// Bytes to copy.
        len: u64,
        /// Bytes the buffer holds.
        size: u64,
        /// `N ('name')`.
        device: Option<String>,
    },
    /// A device's buffers exceed the per-device memory cap.
    #[error("device {device} needs {needed} bytes of buffers for its slice, over the cap of {cap} bytes")]
    MemoryCap {
        /// `N ('name')`.
        device: String,
        /// Bytes of buffers needed.
        needed: u64,
        /// The cap.
        cap: u64,
    },
    /// A resident buffer used wrongly (a range outside it, a binding that
    /// does not fit the argument).
    #[error("buffer: {message}")]
    Buffer {
        /// What is wrong.
        message: String,
    },
    /// Elements whose last writer failed were read: they are valid nowhere.
    #[error("elements [{lower}, {upper}] of the buffer were lost: the launch that last wrote them failed (write them again before reading)")]
    Lost {
        /// First lost element of the read.
        lower: i64,
        /// Last lost element of the read.
        upper: i64,
    },
}

fn on_device(device: &Option<String>) -> String {
    match device {
        Some(d) => format!(" on device {d}"),
        None => String::new(),
    }
}

/// Result with [`LaunchError`].
pub type Result<T, E = LaunchError> = std::result::Result<T, E>;

/// Converts an opencl3 error into a [`LaunchError::OpenCl`].
pub(crate) fn cl_err(
    call: &'static str,
    device: Option<String>,
) -> impl FnOnce(opencl3::error_codes::ClError) -> LaunchError {
    move |e| LaunchError::OpenCl {
        call,
        code: String::from(e),
        device,
    }
}
