/*
 * clpart.h -- run one OpenCL kernel split across several OpenCL devices.
 *
 * An OpenCL application keeps its host code (platforms, devices, host
 * arrays) and replaces the kernel launch:
 *
 *     clSetKernelArg(k, i, ...)            ->  clpart_plan_set_arg_*(plan, i, ...)
 *     clEnqueueNDRangeKernel(q, k, dim,    ->  clpart_plan_launch_on(plan, dim,
 *         offset, global, local, ...)             offset, global, local,
 *                                                 n_devices, devices, shares)
 *
 * A plan analyzes the kernel (which array elements each slice of the
 * NDRange touches), splits the NDRange into slices of whole work-groups by
 * the shares, copies to each device only the ranges its slice reads, runs
 * the slices on all devices at once and writes the outputs back into the
 * application's host arrays, bit for bit what one device would produce.
 * What cannot be proved safe to split runs whole on one device (the report
 * says why); a split never changes a result.
 *
 * Iterative programs launch kernels again and again over the same arrays.
 * Bound to buffer handles (clpart_buffer_create*, then
 * clpart_plan_set_arg_resident) instead of host arrays, the arrays stay on
 * the devices between launches: each launch sends a device only the
 * elements its slice reads and it does not hold yet (a time-stepped
 * stencil: the halo rows at the split boundary), what a device writes stays
 * there, and clpart_buffer_read gathers only what the host lacks.
 *
 * Build and link:   cc app.c $(pkg-config --cflags --libs clpart)
 *   or, with CMake:  find_package(clpart REQUIRED)
 *                    target_link_libraries(app PRIVATE clpart::clpart)
 *
 * STATUS AND ERRORS
 *   Every function returns a status code (CLPART_SUCCESS or a negative
 *   CLPART_* value), except clpart_last_error, clpart_status_name and
 *   clpart_version, which return strings. After a failed call,
 *   clpart_last_error() gives a one-line message naming the offending
 *   argument or value. No call crashes on a NULL pointer where a pointer
 *   is required, on a NULL, released or foreign plan handle
 *   (CLPART_INVALID_HANDLE), or on an internal error (CLPART_PANIC):
 *   nothing unwinds into C. The same holds for buffer handles.
 *
 * OWNERSHIP
 *   - A plan is created by clpart_plan_create_* and owned by the caller
 *     until clpart_plan_release; it owns everything it allocates (analysis
 *     results, OpenCL programs, kernels, per-device buffers, reports).
 *   - A buffer is created by clpart_buffer_create* and owned by the caller
 *     until clpart_buffer_release; clpart owns its data (one host copy and
 *     the elements on the devices). A plan argument bound to it with
 *     clpart_plan_set_arg_resident holds a reference: after the handle is
 *     released, the data lives on until that argument is set again or the
 *     plan is released. Releasing a plan never releases a buffer handle.
 *   - Strings and arrays passed in are read during the call only (they are
 *     copied, clpart_buffer_create_from_host's and clpart_buffer_write's
 *     included), except the host arrays of clpart_plan_set_arg_buffer: clpart
 *     keeps the pointer, reads the array at every launch and writes the
 *     kernel's outputs into it before the launch returns. It must stay valid
 *     (and must not be freed or moved) until the last launch that uses it has
 *     returned; clpart never frees it.
 *   - Strings returned by clpart are owned by clpart: clpart_last_error's
 *     until the next clpart call on the same thread, clpart_plan_report_text's
 *     until the plan's next launch or release, clpart_status_name's forever.
 *     Never free them.
 *   - Out-parameters (out_*) are written by clpart; the caller owns the
 *     storage.
 *
 * DEVICES AND OPENCL OBJECTS
 *   clpart sees every device of every OpenCL platform (the ICD loader's
 *   order), indexed 0 .. clpart_device_count()-1. The application may name
 *   devices by index (clpart_plan_launch) or pass its own cl_device_ids
 *   (clpart_plan_launch_on; handles from clGetDeviceIDs, not sub-devices).
 *   clpart creates its own context and in-order queue per device and its own
 *   buffers: the application's cl_context, cl_command_queue, cl_mem and
 *   cl_kernel objects are not used (and not touched). Pass host arrays or
 *   clpart buffers. A launch is blocking: when it returns, the outputs are
 *   in the host arrays (or held by the buffers, on the devices that wrote
 *   them) and no clpart work is pending. Finish the application's own
 *   queues that write those host arrays before launching.
 *   PoCL reads POCL_DEVICES when OpenCL is first used in the process (for
 *   example POCL_DEVICES="pthread basic" gives two CPU devices).
 *
 * THREAD SAFETY
 *   A plan is not thread-safe: use each plan from one thread at a time.
 *   Different plans may be created, launched and released concurrently from
 *   different threads (launches that share a device take turns on it). The
 *   functions without a plan argument are thread-safe. A buffer may be used
 *   by several threads and plans: calls and launches that use the same
 *   buffer take turns (a launch holds all its buffers until it returns);
 *   only clpart_buffer_release must not race with another use of the same
 *   handle. The last error message is per thread.
 */

#ifndef CLPART_H
#define CLPART_H

/* Generated by cbindgen from capi/src (capi/cbindgen.toml); do not edit: run CLPART_BLESS=1 cargo test -p clpart-capi --test header. */

#include <stddef.h>
#include <stdint.h>
#include <CL/cl.h>

/*
 The version of clpart this header belongs to: MAJOR.MINOR.PATCH.
 clpart_version() gives the version of the library loaded at run time;
 the shared library's SONAME is libclpart.so.MAJOR.
 */
#define CLPART_VERSION_MAJOR 0
#define CLPART_VERSION_MINOR 1
#define CLPART_VERSION_PATCH 0
#define CLPART_VERSION_STRING "0.1.0"

/*
 The call succeeded.
 */
#define CLPART_SUCCESS 0

/*
 A required pointer is NULL, a string is not UTF-8, or a value (shares,
 device list, buffer aliasing) is invalid.
 */
#define CLPART_INVALID_ARGUMENT -1

/*
 The plan or buffer handle is NULL, already released, or not one.
 */
#define CLPART_INVALID_HANDLE -2

/*
 The kernel argument index is not below the kernel's argument count.
 */
#define CLPART_INVALID_ARG_INDEX -3

/*
 The kernel argument is of another kind (scalar, buffer or __local):
 the message names the function that sets it.
 */
#define CLPART_INVALID_ARG_KIND -4

/*
 A size does not match: a scalar's size differs from the argument's type,
 a buffer is not a whole number of elements, or a buffer is smaller than
 the elements the NDRange accesses.
 */
#define CLPART_SIZE_MISMATCH -5

/*
 A launch found a kernel argument that was never set.
 */
#define CLPART_ARGS_NOT_SET -6

/*
 The work dimension, global, local or offset sizes are invalid (the global
 size must be a multiple of the local size in every dimension).
 */
#define CLPART_INVALID_NDRANGE -7

/*
 No OpenCL device, or a device index or cl_device_id clpart does not know.
 */
#define CLPART_DEVICE_NOT_FOUND -8

/*
 The kernel source does not parse, or has no kernel of that name.
 */
#define CLPART_ANALYSIS_FAILED -9

/*
 The range file cannot be read, is corrupt, or has no kernel of that name.
 */
#define CLPART_INVALID_RANGE_FILE -10

/*
 The OpenCL compiler rejected the kernel (or its subkernel) on a device.
 */
#define CLPART_BUILD_FAILED -11

/*
 An OpenCL call failed during the launch.
 */
#define CLPART_LAUNCH_FAILED -12

/*
 Verification was on and the split result differs from an unsplit run
 (the split result is in the host arrays; the message names the array and
 element).
 */
#define CLPART_VERIFY_FAILED -13

/*
 A report was asked for before the plan's first successful launch.
 */
#define CLPART_NO_REPORT -14

/*
 A read met elements of a buffer whose last writer, a launch that failed
 on its device, lost them: they are valid nowhere (write them again).
 */
#define CLPART_DATA_LOST -15

/*
 An internal error (a bug in clpart) was caught; the message says where.
 */
#define CLPART_PANIC -99

/*
 A buffer whose elements stay on the devices across launches (opaque to C).
 */
typedef struct clpart_buffer clpart_buffer;

/*
 A kernel ready to be launched split across devices (opaque to C).
 */
typedef struct clpart_plan clpart_plan;

/*
 The outcome of a plan's last launch.
 */
typedef struct clpart_report {
  /*
   1 when the kernel ran split across devices, 0 when it ran whole on
   one device (the text report says why).
   */
  int split;
  /*
   1 when verification ran and every output byte matched, 0 when it
   found a difference, -1 when verification was off.
   */
  int verified;
  /*
   1 when this launch ran the analysis, 0 when it reused a cached one.
   */
  int analyzed;
  /*
   The NDRange dimension that was split (0 when it ran whole).
   */
  cl_uint split_dim;
  /*
   Devices that ran work-groups: entries of `clpart_plan_report_device`.
   */
  cl_uint n_devices;
  /*
   Bytes moved between host and devices, both directions, all devices.
   */
  uint64_t bytes_total;
  /*
   Bytes a whole-buffer split would move.
   */
  uint64_t bytes_whole_buffers;
  /*
   Bytes of the distinct elements the slices touch; `UINT64_MAX` when
   unknown.
   */
  uint64_t bytes_exact;
  /*
   Milliseconds spent analyzing the kernel for this launch (0 when cached).
   */
  double analysis_ms;
  /*
   Milliseconds of the launch: transfers, kernels and gluing (without the
   analysis and verification).
   */
  double wall_ms;
} clpart_report;

/*
 What one device did in a plan's last launch.
 */
typedef struct clpart_device_report {
  /*
   The device's clpart index.
   */
  cl_uint device_index;
  /*
   Work-groups the device ran.
   */
  uint64_t work_groups;
  /*
   First work-group of its slice along the split dimension.
   */
  uint64_t slice_begin;
  /*
   One past the last work-group of its slice.
   */
  uint64_t slice_end;
  /*
   Bytes copied host to device.
   */
  uint64_t bytes_to_device;
  /*
   Bytes copied device to host.
   */
  uint64_t bytes_from_device;
  /*
   Kernel execution time (OpenCL profiling), milliseconds.
   */
  double kernel_ms;
} clpart_device_report;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/*
 The message of the last failed clpart call on this thread ("" when the
 last call succeeded). Owned by clpart; valid until the next clpart call
 on this thread. Never NULL.
 */
const char *clpart_last_error(void);

/*
 The name of a status code, e.g. "CLPART_SIZE_MISMATCH", or
 "CLPART_UNKNOWN_STATUS". A static string. Never NULL.
 */
const char *clpart_status_name(int status);

/*
 The version of the clpart library loaded at run time, "MAJOR.MINOR.PATCH"
 (Cargo's version of clpart). The header a program was compiled with has
 its own, CLPART_VERSION_STRING; they differ when the program runs
 against a newer library of the same major version. A static string.
 Never NULL.
 */
const char *clpart_version(void);

/*
 The number of OpenCL devices clpart sees, over all platforms.
 CLPART_DEVICE_NOT_FOUND when there is none.

 # Safety
 `out_count` is NULL or writable.
 */
int clpart_device_count(cl_uint *out_count);

/*
 The name of device device_index, OpenCL style: with buf NULL, only
 *out_size (bytes including the terminating NUL) is written; otherwise the
 NUL-terminated name is copied into buf (buf_size bytes;
 CLPART_SIZE_MISMATCH when too small). out_size may be NULL when buf is
 given.

 # Safety
 `buf` is NULL or writable for `buf_size` bytes; `out_size` is NULL or
 writable.
 */
int clpart_device_name(cl_uint device_index, char *buf, size_t buf_size, size_t *out_size);

/*
 The clpart index of one of the application's devices (a cl_device_id from
 clGetDeviceIDs in this process). CLPART_DEVICE_NOT_FOUND for NULL, a
 sub-device or an unknown handle. The handle is only compared.

 # Safety
 `out_index` is NULL or writable. `device` is only compared, never
 dereferenced.
 */
int clpart_device_index(cl_device_id device, cl_uint *out_index);

/*
 Creates a plan for kernel kernel_name (NULL: the first kernel) of the
 NUL-terminated OpenCL C source. build_options (NULL or e.g. "-DN=16
 -DTYPE=float", separated by spaces; no quoting) are used both by the
 analysis and by the OpenCL compiler. The source is parsed now
 (CLPART_ANALYSIS_FAILED with file:line:col on a syntax error or an
 unknown kernel name); the analysis runs at the first launch of each
 distinct global size, local size and integer scalar argument values and
 is cached in the plan (up to 16 configurations). On success *out_plan is
 a new plan the caller releases with clpart_plan_release; on failure it is
 set to NULL.

 # Safety
 The strings are NULL or NUL-terminated; `out_plan` is NULL or writable.
 */
int clpart_plan_create_from_source(const char *source,
                                   const char *kernel_name,
                                   const char *build_options,
                                   struct clpart_plan **out_plan);

/*
 Creates a plan for kernel kernel_name (NULL: the first kernel) of a range
 file written by `clpart analyze -o FILE.ron` (nothing is analyzed at
 launch). *out_plan as for clpart_plan_create_from_source.

 # Safety
 The strings are NULL or NUL-terminated; `out_plan` is NULL or writable.
 */
int clpart_plan_create_from_range_file(const char *path,
                                       const char *kernel_name,
                                       struct clpart_plan **out_plan);

/*
 The number of arguments of the plan's kernel.

 # Safety
 `plan` is used by this thread only; `out_count` is NULL or writable.
 */
int clpart_plan_num_args(const struct clpart_plan *plan, cl_uint *out_count);

/*
 Sets a by-value argument as clSetKernelArg does: arg_size must be the
 size of the argument's type (CLPART_SIZE_MISMATCH otherwise); the value
 is copied. Integer scalars (e.g. a run-time width) may enter the
 analysis.

 # Safety
 `plan` is used by this thread only; `arg_value` is NULL or readable for
 `arg_size` bytes.
 */
int clpart_plan_set_arg_scalar(struct clpart_plan *plan,
                               cl_uint arg_index,
                               size_t arg_size,
                               const void *arg_value);

/*
 Sets a __global or __constant buffer argument to the host array host_ptr
 of size_bytes bytes (a whole number of elements). clpart keeps the
 pointer: at each launch it copies the array (the kernel works on the
 copy), and writes the kernel's output back into it (__global arrays
 only, and only when the kernel changed them) before the launch returns. The array must stay valid until the
 last launch that uses it has returned. Two buffer arguments must not
 share memory when the kernel may write one of them
 (CLPART_INVALID_ARGUMENT at launch).

 # Safety
 `plan` is used by this thread only; `host_ptr` stays valid for reads and
 writes of `size_bytes` bytes until the launches that use it return.
 */
int clpart_plan_set_arg_buffer(struct clpart_plan *plan,
                               cl_uint arg_index,
                               void *host_ptr,
                               size_t size_bytes);

/*
 Creates a buffer of n_elems zero elements of elem_type, an OpenCL C
 scalar or vector type name ("float", "int", "uchar", "float4", ...;
 CLPART_INVALID_ARGUMENT otherwise). On success *out_buffer is a new
 handle the caller releases with clpart_buffer_release; on failure it is
 set to NULL.

 # Safety
 `elem_type` is NULL or NUL-terminated; `out_buffer` is NULL or writable.
 */
int clpart_buffer_create(const char *elem_type, size_t n_elems, struct clpart_buffer **out_buffer);

/*
 Creates a buffer of elem_type holding a copy of the size_bytes bytes at
 host_ptr (read during the call only; clpart keeps no pointer to it).
 *out_buffer as for clpart_buffer_create.

 # Safety
 `elem_type` is NULL or NUL-terminated; `host_ptr` is NULL or readable
 for `size_bytes` bytes; `out_buffer` is NULL or writable.
 */
int clpart_buffer_create_from_host(const char *elem_type,
                                   const void *host_ptr,
                                   size_t size_bytes,
                                   struct clpart_buffer **out_buffer);

/*
 The buffer's size in bytes.

 # Safety
 `out_size_bytes` is NULL or writable.
 */
int clpart_buffer_size(const struct clpart_buffer *buffer, size_t *out_size_bytes);

/*
 Copies size_bytes bytes from src (read during the call only) into the
 buffer at offset_bytes. Those elements are then valid on the host only:
 the next launch sends them to the devices that read them.

 # Safety
 `src` is NULL or readable for `size_bytes` bytes.
 */
int clpart_buffer_write(struct clpart_buffer *buffer,
                        size_t offset_bytes,
                        size_t size_bytes,
                        const void *src);

/*
 Copies size_bytes bytes of the buffer at offset_bytes into dst (the
 caller's storage), gathering from the devices only the elements the
 host copy lacks. CLPART_DATA_LOST when an element's last writer failed.

 # Safety
 `dst` is NULL or writable for `size_bytes` bytes.
 */
int clpart_buffer_read(struct clpart_buffer *buffer,
                       size_t offset_bytes,
                       size_t size_bytes,
                       void *dst);

/*
 Copies the whole buffer into dst; size_bytes must be the buffer's size
 (clpart_buffer_size; CLPART_SIZE_MISMATCH otherwise). As
 clpart_buffer_read otherwise.

 # Safety
 `dst` is NULL or writable for `size_bytes` bytes.
 */
int clpart_buffer_read_all(struct clpart_buffer *buffer, void *dst, size_t size_bytes);

/*
 Releases the handle: it is invalid afterwards (releasing it again returns
 CLPART_INVALID_HANDLE). The data and its device memory are freed now, or
 when the last plan argument bound to it is set again or its plan is
 released.

 # Safety
 No other thread uses the handle.
 */
int clpart_buffer_release(struct clpart_buffer *buffer);

/*
 Binds a __global or __constant buffer argument to a buffer handle (see
 "Buffers" below): launches read and write the buffer where its elements
 are, on the host or on the devices, and leave what they write on the
 devices that wrote it; nothing is copied back to any host array. The
 buffer's element size must be the argument's (CLPART_SIZE_MISMATCH).
 The plan keeps a reference to the buffer's data (see OWNERSHIP). Two
 arguments of one launch must not be bound to the same buffer
 (CLPART_INVALID_ARGUMENT at launch). A buffer may be bound to arguments
 of several plans, e.g. one kernel's output and the next one's input.

 # Safety
 `plan` is used by this thread only.
 */
int clpart_plan_set_arg_resident(struct clpart_plan *plan,
                                 cl_uint arg_index,
                                 struct clpart_buffer *buffer);

/*
 Sets a __local pointer argument to size_bytes bytes per work-group, as
 clSetKernelArg(k, i, size_bytes, NULL) does.

 # Safety
 `plan` is used by this thread only.
 */
int clpart_plan_set_arg_local(struct clpart_plan *plan, cl_uint arg_index, size_t size_bytes);

/*
 verify != 0: each launch also runs the kernel unsplit on one device and
 compares every output byte (CLPART_VERIFY_FAILED on a difference). Off by
 default; it costs an unsplit run.

 # Safety
 `plan` is used by this thread only.
 */
int clpart_plan_set_verify(struct clpart_plan *plan, int verify);

/*
 unchecked != 0 turns the run-time guard off. With the guard on (the
 default) each device's subkernel checks every access against the range the
 analysis gave its slice; an access outside it is skipped, that launch's
 device results are discarded and the kernel re-runs unsplit (noted in the
 report); an access outside a host array or __local argument makes the
 launch fail with nothing written back. Off, a defect of the analysis could
 corrupt memory or change results.

 # Safety
 `plan` is used by this thread only.
 */
int clpart_plan_set_unchecked(struct clpart_plan *plan, int unchecked);

/*
 on != 0: automatic shares. Each launch's devices get work-groups in
 proportion to their measured speed on the kernel, refined from the
 devices' busy times launch after launch; the shares passed to a launch
 then only select the devices. A first launch over host arrays runs in
 two rounds where the NDRange has enough work-groups (the first ones at
 even shares measure the devices, the rest run at the measured shares);
 over resident buffers it is even. on == 0 goes back to the given shares.

 # Safety
 `plan` is used by this thread only.
 */
int clpart_plan_set_auto_split(struct clpart_plan *plan, int on);

/*
 Runs the kernel over the NDRange split across devices, as
 clEnqueueNDRangeKernel would run it on one, and blocks until the outputs
 are in the host arrays (buffer handles keep theirs on the devices).
 - work_dim: 1 to 3; global_offset: NULL (zeros) or work_dim sizes;
   global_size: work_dim sizes.
 - local_size: work_dim sizes, each dividing the global size. The
   work-group is the split unit, so pass the size the kernel expects. NULL
   lets clpart choose: the largest divisor of global_size[0] up to 64 in
   dimension 0, 1 in the others.
 - n_devices, device_indices, shares: the devices by clpart index (NULL:
   0 .. n_devices-1) and their shares of the work-groups (NULL: even;
   otherwise non-negative weights normalized by their sum, e.g. {86, 14}
   or {0.86, 0.14}); n_devices 0 with both NULL: every device, even
   shares.

 Every argument must be set (CLPART_ARGS_NOT_SET names the first unset
 one). When a launch fails the host arrays are unchanged, except with
 CLPART_VERIFY_FAILED, where they hold the split result; a buffer keeps
 every element valid somewhere, except those a failed device was writing
 (a later read of them is CLPART_DATA_LOST).

 # Safety
 `plan` is used by this thread only; the arrays are NULL or hold
 `work_dim` (sizes) or `n_devices` (devices, shares) elements; every host
 array set on the plan is valid (see `clpart_plan_set_arg_buffer`).
 */
int clpart_plan_launch(struct clpart_plan *plan,
                       cl_uint work_dim,
                       const size_t *global_offset,
                       const size_t *global_size,
                       const size_t *local_size,
                       cl_uint n_devices,
                       const cl_uint *device_indices,
                       const double *shares);

/*
 As clpart_plan_launch, with the application's own devices: devices holds
 n_devices cl_device_ids from clGetDeviceIDs (not sub-devices; see
 clpart_device_index); shares as for clpart_plan_launch.

 # Safety
 As [`clpart_plan_launch`]; `devices` holds `n_devices` handles.
 */
int clpart_plan_launch_on(struct clpart_plan *plan,
                          cl_uint work_dim,
                          const size_t *global_offset,
                          const size_t *global_size,
                          const size_t *local_size,
                          cl_uint n_devices,
                          const cl_device_id *devices,
                          const double *shares);

/*
 The report of the plan's last launch (CLPART_NO_REPORT before one).

 # Safety
 `plan` is used by this thread only; `out_report` is NULL or writable.
 */
int clpart_plan_report(const struct clpart_plan *plan, struct clpart_report *out_report);

/*
 Device entry i (0 to n_devices-1 of clpart_plan_report) of the last
 launch.

 # Safety
 `plan` is used by this thread only; `out_report` is NULL or writable.
 */
int clpart_plan_report_device(const struct clpart_plan *plan,
                              cl_uint i,
                              struct clpart_device_report *out_report);

/*
 The last launch's report as text, several lines, as `clpart run` prints
 it (devices, slices, bytes, times, why a kernel ran whole). *out_text is
 owned by the plan: valid until its next launch or release.

 # Safety
 `plan` is used by this thread only; `out_text` is NULL or writable.
 */
int clpart_plan_report_text(const struct clpart_plan *plan, const char **out_text);

/*
 Releases the plan and everything it owns (not the host arrays). The
 handle is invalid afterwards; releasing it again returns
 CLPART_INVALID_HANDLE.

 # Safety
 No other thread uses the plan.
 */
int clpart_plan_release(struct clpart_plan *plan);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* CLPART_H */
