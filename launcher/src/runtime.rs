//! Devices, per-device contexts and queues, and the program cache.
//!
//! Every device gets its own context and one in-order queue with profiling
//! (devices of different platforms cannot share a context). Built programs are
//! cached per device, source and build options, so plans for the same kernel
//! and repeated launches never rebuild.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::cl_device_id;
use serde::Serialize;

use crate::error::{cl_err, LaunchError, Result};
use crate::exec::Worker;
use crate::pool::{BufferPool, PoolCounts};

/// The kind of an OpenCL device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceType {
    /// `CL_DEVICE_TYPE_CPU`
    Cpu,
    /// `CL_DEVICE_TYPE_GPU`
    Gpu,
    /// `CL_DEVICE_TYPE_ACCELERATOR`
    Accelerator,
    /// Anything else (custom, default).
    Other,
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Gpu => "gpu",
            DeviceType::Accelerator => "accelerator",
            DeviceType::Other => "other",
        })
    }
}

/// One OpenCL device as `clpart devices` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    /// Index over all platforms' devices, in platform order: what `--split`
    /// and the launch shares refer to.
    pub index: usize,
    /// Platform name.
    pub platform: String,
    /// Device name.
    pub name: String,
    /// Device type.
    #[serde(rename = "type")]
    pub device_type: DeviceType,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: u32,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` in bytes.
    pub global_mem_bytes: u64,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem_bytes: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`: the largest buffer, in bytes.
    pub max_alloc_bytes: u64,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`: most work-items in a work-group.
    pub max_work_group_size: u64,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`: most work-items of a work-group per
    /// dimension.
    pub max_work_item_sizes: Vec<u64>,
    /// `CL_DEVICE_ADDRESS_BITS`: the width of the device's `size_t`.
    pub address_bits: u32,
}

impl DeviceInfo {
    /// `N ('name')`, as error messages name a device.
    pub fn label(&self) -> String {
        format!("{} ('{}')", self.index, self.name)
    }

    /// Whether `other` reports the same resources: platform, type, compute
    /// units, memory and work-group limits (two devices of one model, or
    /// two drivers' views of one processor). Such devices are taken to run
    /// a kernel equally fast until measured otherwise.
    pub fn alike(&self, other: &DeviceInfo) -> bool {
        self.platform == other.platform
            && self.device_type == other.device_type
            && self.compute_units == other.compute_units
            && self.global_mem_bytes == other.global_mem_bytes
            && self.local_mem_bytes == other.local_mem_bytes
            && self.max_alloc_bytes == other.max_alloc_bytes
            && self.max_work_group_size == other.max_work_group_size
            && self.max_work_item_sizes == other.max_work_item_sizes
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}] {} compute units, {} MiB, platform '{}'",
            self.index,
            self.name,
            self.device_type,
            self.compute_units,
            self.global_mem_bytes >> 20,
            self.platform
        )
    }
}

/// Lists every OpenCL device, flattened over platforms.
///
/// PoCL reads `POCL_DEVICES` when the ICD loader first loads it, so set it
/// before the first call into OpenCL in the process.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    Ok(enumerate()?.into_iter().map(|(info, _)| info).collect())
}

fn enumerate() -> Result<Vec<(DeviceInfo, cl_device_id)>> {
    let platforms = match get_platforms() {
        Ok(p) => p,
        // the ICD loader reports "no platform" as an error
        Err(_) => return Err(LaunchError::NoDevices),
    };
    let mut out = Vec::new();
    for platform in platforms {
        let pname = platform.name().map_err(cl_err("clGetPlatformInfo", None))?;
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(_) => continue, // CL_DEVICE_NOT_FOUND: a platform without devices
        };
        for id in ids {
            let d = Device::new(id);
            let query = cl_err("clGetDeviceInfo", None);
            let name = d.name().map_err(query)?.trim().to_string();
            let ty = d.dev_type().map_err(cl_err("clGetDeviceInfo", None))?;
            let device_type = if ty & CL_DEVICE_TYPE_GPU != 0 {
                DeviceType::Gpu
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                DeviceType::Cpu
            } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
                DeviceType::Accelerator
            } else {
                DeviceType::Other
            };
            out.push((
                DeviceInfo {
                    index: out.len(),
                    platform: pname.trim().to_string(),
                    name,
                    device_type,
                    compute_units: d
                        .max_compute_units()
                        .map_err(cl_err("clGetDeviceInfo", None))?,
                    global_mem_bytes: d
                        .global_mem_size()
                        .map_err(cl_err("clGetDeviceInfo", None))?,
                    local_mem_bytes: d
                        .local_mem_size()
                        .map_err(cl_err("clGetDeviceInfo", None))?,
                    max_alloc_bytes: d
                        .max_mem_alloc_size()
                        .map_err(cl_err("clGetDeviceInfo", None))?,
                    max_work_group_size: d
                        .max_work_group_size()
                        .map_err(cl_err("clGetDeviceInfo", None))?
                        as u64,
                    max_work_item_sizes: d
                        .max_work_item_sizes()
                        .map_err(cl_err("clGetDeviceInfo", None))?
                        .into_iter()
                        .map(|s| s as u64)
                        .collect(),
                    address_bits: d.address_bits().map_err(cl_err("clGetDeviceInfo", None))?,
                },
                id,
            ));
        }
    }
    if out.is_empty() {
        return Err(LaunchError::NoDevices);
    }
    Ok(out)
}

/// A device's context and its profiling queue.
pub(crate) struct DeviceCtx {
    /// The device's worker thread (`exec::on_devices`).
    pub(crate) worker: Worker,
    pub(crate) info: DeviceInfo,
    pub(crate) id: cl_device_id,
    /// Device buffers kept for reuse between launches (`pool.rs`).
    pub(crate) pool: BufferPool,
    // field order: the pool's buffers and the queue are released before
    // the context
    pub(crate) queue: CommandQueue,
    pub(crate) context: Context,
    /// Held while a launch uses the queue: launches from several threads
    /// take turns per device (PoCL's devices misbehave when two threads
    /// enqueue and finish on one queue at once). Lock in device-index order.
    pub(crate) busy: Mutex<()>,
}

impl DeviceCtx {
    /// Takes the device for one launch.
    pub(crate) fn take(&self) -> std::sync::MutexGuard<'_, ()> {
        self.busy.lock().unwrap_or_else(|p| p.into_inner())
    }
}

// SAFETY: cl_device_id is a plain handle that OpenCL allows to be used from
// any thread; the other fields are Send + Sync in opencl3.
unsafe impl Send for DeviceCtx {}
unsafe impl Sync for DeviceCtx {}

struct Slot {
    info: DeviceInfo,
    id: cl_device_id,
    ctx: Mutex<Option<Arc<DeviceCtx>>>,
}

// SAFETY: see DeviceCtx.
unsafe impl Send for Slot {}
unsafe impl Sync for Slot {}

type ProgramKey = (usize, String, String);

struct Inner {
    slots: Vec<Slot>,
    programs: Mutex<HashMap<ProgramKey, Arc<Program>>>,
    /// Programs built (cache misses of `programs`), for reports.
    n_builds: std::sync::atomic::AtomicU64,
}

/// The OpenCL devices of this process with lazily created contexts and
/// queues, and a cache of built programs. Cheap to clone (shared).
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("devices", &self.devices())
            .finish()
    }
}

impl Runtime {
    /// Enumerates the devices; contexts and queues are created on first use.
    pub fn new() -> Result<Runtime> {
        let slots = enumerate()?
            .into_iter()
            .map(|(info, id)| Slot {
                info,
                id,
                ctx: Mutex::new(None),
            })
            .collect();
        Ok(Runtime {
            inner: Arc::new(Inner {
                slots,
                programs: Mutex::new(HashMap::new()),
                n_builds: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }

    /// The devices, by index.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.inner.slots.iter().map(|s| s.info.clone()).collect()
    }

    /// Whether every device of `devices` is [`DeviceInfo::alike`] the
    /// first (`false` for an index this runtime lacks).
    pub fn alike(&self, devices: &[usize]) -> bool {
        let infos: Option<Vec<&DeviceInfo>> =
            devices.iter().map(|&d| self.device(d).ok()).collect();
        infos.is_some_and(|i| i.windows(2).all(|w| w[0].alike(w[1])))
    }

    /// The device with this index.
    pub fn device(&self, index: usize) -> Result<&DeviceInfo> {
        self.inner
            .slots
            .get(index)
            .map(|s| &s.info)
            .ok_or_else(|| self.unknown_device(index))
    }

    pub(crate) fn unknown_device(&self, index: usize) -> LaunchError {
        LaunchError::UnknownDevice {
            index,
            valid: (0..self.inner.slots.len())
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The index of the device whose OpenCL handle is `raw` (a `cl_device_id`
    /// the host application got from `clGetDeviceIDs` in this process; the
    /// ICD loader hands out the same handle to every caller). `None` for a
    /// handle this runtime did not enumerate (e.g. a sub-device). Only the
    /// pointer value is compared; the handle is never dereferenced.
    pub fn device_index_of(&self, raw: *mut std::ffi::c_void) -> Option<usize> {
        self.inner
            .slots
            .iter()
            .position(|s| std::ptr::eq(s.id, raw))
    }

    /// The counts of device `index`'s buffer pool (device buffers kept for
    /// reuse between launches), creating the device's context if needed;
    /// they stay readable after the runtime is dropped.
    pub fn pool_counts(&self, index: usize) -> Result<Arc<PoolCounts>> {
        Ok(self.ctx(index)?.pool.counts())
    }

    /// Number of built programs in the cache (all devices).
    pub fn n_cached_programs(&self) -> usize {
        self.inner
            .programs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// The context and queue of a device, created on first use.
    pub(crate) fn ctx(&self, index: usize) -> Result<Arc<DeviceCtx>> {
        let slot = self
            .inner
            .slots
            .get(index)
            .ok_or_else(|| self.unknown_device(index))?;
        let mut guard = slot.ctx.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ctx) = guard.as_ref() {
            return Ok(ctx.clone());
        }
        let label = Some(slot.info.label());
        let device = Device::new(slot.id);
        let context =
            Context::from_device(&device).map_err(cl_err("clCreateContext", label.clone()))?;
        // SAFETY: the device belongs to the context just created from it.
        #[allow(deprecated)]
        let queue = unsafe {
            CommandQueue::create_with_properties(&context, slot.id, CL_QUEUE_PROFILING_ENABLE, 0)
                .or_else(|_| CommandQueue::create(&context, slot.id, CL_QUEUE_PROFILING_ENABLE))
        }
        .map_err(cl_err("clCreateCommandQueue", label))?;
        let ctx = Arc::new(DeviceCtx {
            worker: Worker::new(),
            info: slot.info.clone(),
            id: slot.id,
            pool: BufferPool::new(),
            queue,
            context,
            busy: Mutex::new(()),
        });
        *guard = Some(ctx.clone());
        Ok(ctx)
    }

    /// How many programs this runtime has built (each device's build of a
    /// source and options counts once; a cached program does not).
    pub fn n_builds(&self) -> u64 {
        self.inner
            .n_builds
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Builds `source` for a device (or returns the cached program) with
    /// exactly the given options: no `-cl-std` the caller did not give, so
    /// that a subkernel is compiled for the OpenCL C version the driver
    /// gives the application's own build of the program.
    /// `kernel` only names the program in error messages.
    ///
    /// Each device's program also gets `-DCLPART_DEVICE_INDEX=<device>`, so
    /// that devices of one driver never share a compiled kernel: PoCL 3.1
    /// keeps one process-wide cache of kernel binaries, keyed by the
    /// program's build hash, the local size and whether the global offset is
    /// zero, but releases an entry found by hash and local size alone. Two
    /// devices of the same type running the same kernel at once, one slice at
    /// offset 0 and one past it, then release the same entry twice and PoCL
    /// aborts (`pocl_release_dlhandle_cache: Assertion found->ref_count > 0`).
    /// With an option of its own, each device's program has its own hash.
    pub(crate) fn program(
        &self,
        device: usize,
        kernel: &str,
        source: &str,
        build_options: &[String],
    ) -> Result<Arc<Program>> {
        let options = device_options(device, build_options);
        let key = (device, source.to_string(), options.clone());
        if let Some(p) = self
            .inner
            .programs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(p.clone());
        }
        let ctx = self.ctx(device)?;
        let label = ctx.info.label();
        let build_err = |first_line: String, log: String| LaunchError::Build {
            kernel: kernel.to_string(),
            device: label.clone(),
            first_line,
            log,
        };
        if options.contains('\0') || source.contains('\0') {
            return Err(build_err(
                "the source or build options contain a nul byte".into(),
                String::new(),
            ));
        }
        self.inner
            .n_builds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let keep = binary_path(&ctx, source, &options);
        let remember = |p: Program| {
            let p = Arc::new(p);
            self.inner
                .programs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, p.clone());
            Ok(p)
        };
        if let Some(bin) = keep.as_ref().and_then(crate::binaries::load) {
            // SAFETY: the device is the context's.
            if let Ok(mut p) =
                unsafe { Program::create_from_binary(&ctx.context, &[ctx.id], &[&bin]) }
            {
                if p.build(&[ctx.id], &options).is_ok() {
                    return remember(p);
                }
            }
        }
        let mut program = Program::create_from_source(&ctx.context, source)
            .map_err(cl_err("clCreateProgramWithSource", Some(label.clone())))?;
        if let Err(e) = program.build(&[ctx.id], &options) {
            let log = program.get_build_log(ctx.id).unwrap_or_default();
            let first_line = log
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("{} (empty build log)", String::from(e)));
            return Err(build_err(first_line, log));
        }
        if let Some(path) = &keep {
            if let Some(bin) = program
                .get_binaries()
                .ok()
                .and_then(|b| b.into_iter().next())
            {
                crate::binaries::store(path, &bin);
            }
        }
        remember(program)
    }
}

/// A device's build options: the application's, and the device's index
/// (see [`Runtime::program`]).
fn device_options(device: usize, build_options: &[String]) -> String {
    let mut options = build_options.join(" ");
    if !options.is_empty() {
        options.push(' ');
    }
    options.push_str(&format!("-DCLPART_DEVICE_INDEX={device}"));
    options
}

/// Where a program's binary is kept for the device of `ctx`, `None` when it
/// is not kept.
fn binary_path(ctx: &DeviceCtx, source: &str, options: &str) -> Option<std::path::PathBuf> {
    let d = Device::new(ctx.id);
    let (version, driver) = (
        d.version().unwrap_or_default(),
        d.driver_version().unwrap_or_default(),
    );
    let ids = [
        ctx.info.name.as_str(),
        &ctx.info.platform,
        &version,
        &driver,
    ];
    crate::binaries::path(&ids, source, options)
}
