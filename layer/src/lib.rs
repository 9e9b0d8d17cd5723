//! clpart's OpenCL layer: `libclpart_layer.so`.
//!
//! Debian 12's ICD loader (ocl-icd 2.3.1) loads the libraries named in
//! `OPENCL_LAYERS`: it calls [`clGetLayerInfo`] and [`clInitLayer`], hands
//! the layer the dispatch table of what lies below it (the driver) and
//! routes every entry point through the table the layer returns. `clpart
//! exec` sets that variable and the layer's configuration (`CLPART_LAYER_*`,
//! see [`config`]) and runs an unmodified application.
//!
//! The application keeps its platforms, devices, contexts, queues and
//! objects: the layer hands out no handle of its own. It watches what a
//! split launch needs ([`state`]: program sources and build options,
//! kernels and their arguments, buffers with their sizes and flags, all with
//! their reference counts) and turns each `clEnqueueNDRangeKernel` of a
//! kernel it can split into a clpart launch across the chosen devices
//! ([`split`]): the application's queue is finished, the argument buffers
//! stay resident on clpart's devices across launches ([`resident`]; read
//! from the application's device only when it wrote them since), the kernel
//! runs split (clpart's own contexts and queues, as `launcher` does), and
//! nothing is written back: the application's copy of a buffer is brought
//! up to date just before an operation of its own reads it through the
//! driver (a read, a map, a copy, a kernel the layer does not split).
//! Everything else, including every launch that cannot be split, goes to
//! the driver untouched, with the reason recorded for the report
//! ([`report`]) written at exit.
//!
//! Under `mpirun -n N clpart exec` (feature `mpi`), the split launches go
//! across the ranks instead ([`ranks`]).
//!
//! Every entry point catches panics: the application never sees one.
//! clpart's own OpenCL calls re-enter the layer through the loader; a
//! thread-local flag ([`state::Inside`]) sends them straight to the driver.
//!
//! With `launcher` and `capi`, this is one of the crates that hold FFI: the
//! layer ABI is `extern "C"` by nature, and its types are `opencl-sys`'s.

#![allow(non_snake_case)]

mod analyses;
mod config;
mod events;
mod history;
mod home;
mod intercept;
mod ranks;
mod report;
mod resident;
mod slots;
mod split;
mod state;

use std::ffi::c_void;
use std::sync::OnceLock;

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::{cl_layer_info, CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100};
use opencl_sys::{cl_int, cl_uint, CL_INVALID_VALUE, CL_SUCCESS};

/// The dispatch table below the layer (the driver's, through the loader).
static TARGET: OnceLock<cl_icd_dispatch> = OnceLock::new();
/// The table handed to the loader: the target's entries with the
/// intercepted ones replaced.
static LAYER: OnceLock<cl_icd_dispatch> = OnceLock::new();

/// Number of entry points in `cl_icd_dispatch` (every field is one pointer).
const N_ENTRIES: usize = std::mem::size_of::<cl_icd_dispatch>() / std::mem::size_of::<usize>();

/// The driver's table. Only called after [`clInitLayer`] (the loader routes
/// no call to the layer before).
pub(crate) fn target() -> &'static cl_icd_dispatch {
    TARGET
        .get()
        .expect("clInitLayer ran before any entry point")
}

/// # Safety
/// `param_value`, when not NULL, is writable for `param_value_size` bytes;
/// `param_value_size_ret`, when not NULL, is writable.
#[no_mangle]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    if param_name != CL_LAYER_API_VERSION {
        return CL_INVALID_VALUE;
    }
    let size = std::mem::size_of::<cl_uint>();
    if !param_value.is_null() {
        if param_value_size < size {
            return CL_INVALID_VALUE;
        }
        // SAFETY: checked not NULL and large enough (the caller's contract).
        unsafe { *(param_value as *mut cl_uint) = CL_LAYER_API_VERSION_100 };
    }
    if !param_value_size_ret.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *param_value_size_ret = size };
    }
    CL_SUCCESS
}

/// # Safety
/// `target_dispatch` points to a table of `num_entries` entry points that
/// outlives the process's use of OpenCL; the two out-pointers are writable.
#[no_mangle]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    if target_dispatch.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
        return CL_INVALID_VALUE;
    }
    let n = (num_entries as usize).min(N_ENTRIES);
    // A table of NULL entries (every field is an `Option` of a function
    // pointer or an `intptr_t`, for which all zeros is valid), then the
    // loader's first `n` entries copied over it.
    // SAFETY: see above.
    let mut below: cl_icd_dispatch = unsafe { std::mem::MaybeUninit::zeroed().assume_init() };
    // SAFETY: the loader's table holds `num_entries >= n` pointer-sized
    // entries; `below` holds `N_ENTRIES >= n`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            target_dispatch as *const usize,
            &mut below as *mut cl_icd_dispatch as *mut usize,
            n,
        )
    };
    let below = *TARGET.get_or_init(|| below);
    let table = LAYER.get_or_init(|| intercept::layer_table(below));
    // under `mpirun`, MPI starts with the application's first OpenCL call
    let _ = std::panic::catch_unwind(ranks::start);
    // SAFETY: checked not NULL (the caller's contract).
    unsafe {
        *num_entries_ret = n as cl_uint;
        *layer_dispatch_ret = table;
    }
    CL_SUCCESS
}

/// Writes the report when the process exits (or the loader unloads the
/// layer): `.fini_array` entries run after `main` returns or `exit` is
/// called, for libraries loaded with `dlopen` too.
#[used]
#[link_section = ".fini_array"]
static AT_EXIT: extern "C" fn() = at_exit;

extern "C" fn at_exit() {
    analyses::stop();
    let _ = std::panic::catch_unwind(split::save_history);
    let _ = std::panic::catch_unwind(report::finish);
    let _ = std::panic::catch_unwind(ranks::finish);
}
