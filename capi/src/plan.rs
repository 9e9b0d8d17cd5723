//! The safe side of a plan: the kernel's arguments as the application set
//! them, the launcher plans (one per analyzed launch configuration for plans
//! made from source), the last report.
//!
//! Host arrays are borrowed raw pointers: the C caller promises they stay
//! valid until the launch that uses them returns. A launch copies each
//! buffer into a launcher [`HostBuffer`], runs, and copies back every
//! `__global` buffer whose bytes changed (so read-only arrays are never
//! written, even when they live in read-only memory).

use std::ffi::CString;
use std::sync::Mutex;
use std::time::Instant;

use launcher::{
    ArgValue, ElemType, HostBuffer, KernelArgs, LaunchOptions, NdRange, RunReport, Runtime,
};
use ranges_format::{ArgInfo, ArgKind, KernelRanges, Mode, RangeFile};
use session::{LaunchConfig, Session};

use crate::buffer::{self, Shared};
use crate::status::*;

/// The file name analysis messages use for source given as a string.
pub(crate) const SOURCE_NAME: &str = "kernel.cl";

/// The process's runtime: devices, contexts, queues and program cache,
/// shared by every plan, created on first use.
static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

pub(crate) fn runtime() -> Result<Runtime> {
    let mut guard = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = guard.as_ref() {
        return Ok(rt.clone());
    }
    let rt = Runtime::new()?;
    *guard = Some(rt.clone());
    Ok(rt)
}

/// One argument as the application set it.
#[derive(Clone, Debug)]
pub(crate) enum ArgSlot {
    Scalar {
        bytes: Vec<u8>,
        int: Option<i64>,
    },
    Buffer {
        ptr: *mut u8,
        len: usize,
    },
    /// A buffer handle's data: resident across launches.
    Resident(Shared),
    Local {
        bytes: u64,
    },
}

/// The last launch's report.
pub(crate) struct Last {
    pub(crate) report: RunReport,
    pub(crate) text: CString,
    pub(crate) analyzed: bool,
    pub(crate) analysis_ms: f64,
}

/// A device selection for one launch: device indices with their shares.
pub(crate) type Shares = Vec<(usize, f64)>;

/// The state behind a `clpart_plan *`.
pub(crate) struct PlanState {
    kernel: String,
    infos: Vec<ArgInfo>,
    /// The analysis session: the source parsed once and launcher plans
    /// cached per launch configuration, or the range file's plan.
    session: Session,
    args: Vec<Option<ArgSlot>>,
    verify: bool,
    /// The run-time guard is off.
    unchecked: bool,
    /// Shares follow the devices' measured speeds (the launch's shares
    /// then only pick the devices), see [`launcher::Balancer`].
    auto_split: bool,
    /// The launches' policy: shares, rounds, measurements. A first
    /// automatic launch over resident buffers runs at even shares, not in
    /// rounds, as `clpart.h` promises.
    door: session::Door,
    pub(crate) last: Option<Last>,
}

fn describe(info: &ArgInfo) -> String {
    match info.kind {
        ArgKind::Scalar => format!("{} ('{}', {})", info.index, info.name, info.elem_type),
        ArgKind::GlobalBuffer => format!(
            "{} ('{}', __global {}*)",
            info.index, info.name, info.elem_type
        ),
        ArgKind::ConstantBuffer => format!(
            "{} ('{}', __constant {}*)",
            info.index, info.name, info.elem_type
        ),
        ArgKind::LocalBuffer => format!(
            "{} ('{}', __local {}*)",
            info.index, info.name, info.elem_type
        ),
    }
}

fn setter_for(kind: ArgKind) -> &'static str {
    match kind {
        ArgKind::Scalar => "clpart_plan_set_arg_scalar",
        ArgKind::GlobalBuffer | ArgKind::ConstantBuffer => {
            "clpart_plan_set_arg_buffer or clpart_plan_set_arg_resident"
        }
        ArgKind::LocalBuffer => "clpart_plan_set_arg_local",
    }
}

impl PlanState {
    /// A plan analyzed from source at each new launch configuration. The
    /// source is parsed now (syntax errors and unknown kernel names fail
    /// here); the analysis runs at launch.
    pub(crate) fn from_source(
        source: &str,
        kernel: Option<&str>,
        build_options: Vec<String>,
    ) -> Result<PlanState> {
        let analysis_err =
            |e: session::SessionError| Error::new(CLPART_ANALYSIS_FAILED, e.to_string());
        let mut session =
            Session::from_source(SOURCE_NAME, source, &build_options).map_err(analysis_err)?;
        // The source parsed now, so a failing analysis at launch is a limit
        // of the analysis: run the kernel whole, with the reason in the report.
        session.set_fallback_unsplit(true);
        let kernel = session.kernel_name(kernel).map_err(analysis_err)?;
        let infos = session.arg_infos(&kernel).map_err(analysis_err)?;
        Ok(PlanState {
            kernel,
            args: vec![None; infos.len()],
            infos,
            session,
            verify: false,
            unchecked: false,
            auto_split: false,
            door: session::Door::new().without_resident_rounds(),
            last: None,
        })
    }

    /// A plan for kernel `kernel` (default: the first) of a range file.
    pub(crate) fn from_range_file(path: &str, kernel: Option<&str>) -> Result<PlanState> {
        let file = RangeFile::read(path)
            .map_err(|e| Error::new(CLPART_INVALID_RANGE_FILE, format!("{path}: {e}")))?;
        let name = match kernel {
            Some(k) => k.to_string(),
            None => match file.kernels.first() {
                Some(k) => k.name.clone(),
                None => {
                    return err(
                        CLPART_INVALID_RANGE_FILE,
                        format!("{path}: the range file holds no kernel"),
                    )
                }
            },
        };
        let runtime = runtime()?;
        let mut session = Session::from_range_file(file);
        let plan_err = |e: session::SessionError| {
            let e = match e {
                session::SessionError::Launch(e) => Error::from(e),
                other => Error::new(CLPART_INVALID_RANGE_FILE, other.to_string()),
            };
            Error::new(e.code, format!("{path}: {}", e.message))
        };
        // The plan is built now: a range file that does not bind fails here.
        let (plan, _) = session
            .plan(&runtime, &name, &LaunchConfig::default())
            .map_err(plan_err)?;
        let infos = {
            let mut infos = plan.kernel().args.clone();
            infos.sort_by_key(|a| a.index);
            infos
        };
        Ok(PlanState {
            kernel: name,
            args: vec![None; infos.len()],
            infos,
            session,
            verify: false,
            unchecked: false,
            auto_split: false,
            door: session::Door::new().without_resident_rounds(),
            last: None,
        })
    }

    pub(crate) fn n_args(&self) -> usize {
        self.infos.len()
    }

    pub(crate) fn set_verify(&mut self, on: bool) {
        self.verify = on;
    }

    pub(crate) fn set_unchecked(&mut self, on: bool) {
        self.unchecked = on;
    }

    /// Automatic shares on (measured per-device speeds, refined launch after
    /// launch) or off (the launch's own shares).
    pub(crate) fn set_auto_split(&mut self, on: bool) {
        // either way, what was measured is forgotten
        self.auto_split = on;
        self.door = session::Door::new().without_resident_rounds();
    }

    /// The argument `index`, checked to be of a kind `ok` accepts.
    fn arg_info(&self, index: u32, ok: &[ArgKind]) -> Result<&ArgInfo> {
        let Some(info) = self.infos.get(index as usize) else {
            let valid = self
                .infos
                .iter()
                .map(|i| format!("{} '{}'", i.index, i.name))
                .collect::<Vec<_>>()
                .join(", ");
            return err(
                CLPART_INVALID_ARG_INDEX,
                format!(
                    "argument index {index} is out of range: kernel '{}' has {} arguments ({valid})",
                    self.kernel,
                    self.infos.len()
                ),
            );
        };
        if !ok.contains(&info.kind) {
            return err(
                CLPART_INVALID_ARG_KIND,
                format!(
                    "argument {} is not set with this function; use {}",
                    describe(info),
                    setter_for(info.kind)
                ),
            );
        }
        Ok(info)
    }

    pub(crate) fn set_scalar(&mut self, index: u32, bytes: &[u8]) -> Result<()> {
        let info = self.arg_info(index, &[ArgKind::Scalar])?;
        if info.elem_size != 0 && bytes.len() != info.elem_size as usize {
            return err(
                CLPART_SIZE_MISMATCH,
                format!(
                    "argument {}: the value has {} bytes, the argument {}",
                    describe(info),
                    bytes.len(),
                    info.elem_size
                ),
            );
        }
        let int = launcher::int_arg_value(info, bytes);
        self.args[index as usize] = Some(ArgSlot::Scalar {
            bytes: bytes.to_vec(),
            int,
        });
        Ok(())
    }

    /// Records a host array (not null, checked by the caller); it is only
    /// dereferenced by [`PlanState::launch`], whose contract covers it.
    pub(crate) fn set_buffer(&mut self, index: u32, ptr: *mut u8, len: usize) -> Result<()> {
        let info = self.arg_info(index, &[ArgKind::GlobalBuffer, ArgKind::ConstantBuffer])?;
        if len == 0 {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("argument {}: the buffer size is 0 bytes", describe(info)),
            );
        }
        let elem = ElemType::parse(&info.elem_type, info.elem_size);
        let size = elem.size.max(1) as usize;
        if !len.is_multiple_of(size) {
            return err(
                CLPART_SIZE_MISMATCH,
                format!(
                    "argument {}: {len} bytes is not a whole number of {}-byte elements",
                    describe(info),
                    size
                ),
            );
        }
        self.args[index as usize] = Some(ArgSlot::Buffer { ptr, len });
        Ok(())
    }

    /// Binds a buffer handle's data to argument `index`: launches leave
    /// it resident on the devices.
    pub(crate) fn set_resident(&mut self, index: u32, buf: Shared) -> Result<()> {
        let info = self.arg_info(index, &[ArgKind::GlobalBuffer, ArgKind::ConstantBuffer])?;
        let want = ElemType::parse(&info.elem_type, info.elem_size);
        let have = buffer::lock(&buf).elem().clone();
        if want.size != have.size {
            return err(
                CLPART_SIZE_MISMATCH,
                format!(
                    "argument {}: its elements have {} bytes, the buffer's ({}) {}",
                    describe(info),
                    want.size,
                    have.name,
                    have.size
                ),
            );
        }
        self.args[index as usize] = Some(ArgSlot::Resident(buf));
        Ok(())
    }

    pub(crate) fn set_local(&mut self, index: u32, bytes: u64) -> Result<()> {
        let info = self.arg_info(index, &[ArgKind::LocalBuffer])?;
        if bytes == 0 {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("argument {}: the __local size is 0 bytes", describe(info)),
            );
        }
        self.args[index as usize] = Some(ArgSlot::Local { bytes });
        Ok(())
    }

    /// The argument slots, or `CLPART_ARGS_NOT_SET` naming the first unset.
    fn slots(&self) -> Result<Vec<ArgSlot>> {
        self.args
            .iter()
            .zip(&self.infos)
            .map(|(slot, info)| {
                slot.clone().ok_or_else(|| {
                    Error::new(
                        CLPART_ARGS_NOT_SET,
                        format!(
                            "argument {} of kernel '{}' is not set (set it with {})",
                            describe(info),
                            self.kernel,
                            setter_for(info.kind)
                        ),
                    )
                })
            })
            .collect()
    }

    /// Runs the kernel over `nd` split by `shares`, the glued outputs landing
    /// in the application's arrays.
    ///
    /// # Safety
    /// Every buffer pointer set on this plan must be valid for reads and
    /// writes of its length (the contract of `clpart_plan_set_arg_buffer`).
    pub(crate) unsafe fn launch(&mut self, nd: &NdRange, shares: &Shares) -> Result<()> {
        let slots = self.slots()?;
        let runtime = runtime()?;
        for &(d, _) in shares {
            runtime.device(d)?;
        }
        let t0 = Instant::now();
        let (plan, analyzed) =
            launcher_plan(&mut self.session, &self.kernel, &self.infos, nd, &slots)?;
        let analysis_ms = if analyzed {
            t0.elapsed().as_secs_f64() * 1e3
        } else {
            0.0
        };
        check_overlaps(plan.kernel(), &self.infos, &slots)?;
        let resident: Vec<(u32, Shared)> = slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                ArgSlot::Resident(b) => Some((i as u32, b.clone())),
                _ => None,
            })
            .collect();
        for (k, (a, x)) in resident.iter().enumerate() {
            for (b, y) in &resident[..k] {
                if std::sync::Arc::ptr_eq(x, y) {
                    return err(
                        CLPART_INVALID_ARGUMENT,
                        format!(
                            "arguments {} and {} are bound to the same buffer; give each buffer argument its own buffer",
                            describe(&self.infos[*b as usize]),
                            describe(&self.infos[*a as usize])
                        ),
                    );
                }
            }
        }

        let mut values = Vec::with_capacity(slots.len());
        for (slot, info) in slots.iter().zip(&self.infos) {
            values.push(match slot {
                ArgSlot::Scalar { bytes, int } => ArgValue::Scalar {
                    bytes: bytes.clone(),
                    int: *int,
                },
                ArgSlot::Local { bytes } => ArgValue::Local { bytes: *bytes },
                ArgSlot::Resident(_) => {
                    // a placeholder: the launch takes the buffer's own data
                    let elem = ElemType::parse(&info.elem_type, info.elem_size);
                    let size = elem.size.max(1) as usize;
                    ArgValue::Buffer(HostBuffer::from_bytes(elem, vec![0; size]))
                }
                ArgSlot::Buffer { ptr, len } => {
                    // SAFETY: the caller's contract (see above).
                    let host = unsafe { std::slice::from_raw_parts(*ptr, *len) };
                    let elem = ElemType::parse(&info.elem_type, info.elem_size);
                    ArgValue::Buffer(HostBuffer::from_bytes(elem, host.to_vec()))
                }
            });
        }
        let mut kargs = KernelArgs::from_values(&self.kernel, &self.infos, values)?;
        let options = LaunchOptions {
            verify: self.verify,
            unchecked: self.unchecked,
            ..Default::default()
        };
        let key = launcher::launch_key(&self.kernel, nd);
        let shares = if self.auto_split {
            session::Shares::Auto(shares.iter().map(|s| s.0).collect())
        } else {
            session::Shares::Fixed(shares.clone())
        };
        // A first automatic launch over host arrays, on devices of unknown
        // speed, runs in two rounds where that pays, as `clpart run --split
        // auto` (session::Door).
        let report = if resident.is_empty() {
            let host = session::Buffers::Host;
            self.door
                .launch(plan, nd, &mut kargs, host, &shares, &key, &options)?
                .report
        } else {
            let shared: Vec<Shared> = resident.iter().map(|(_, b)| b.clone()).collect();
            let mut guards = buffer::lock_all(&shared);
            let mut bufs: Vec<(u32, &mut launcher::DeviceBuffer)> = resident
                .iter()
                .map(|(i, _)| *i)
                .zip(guards.iter_mut().map(|g| &mut **g))
                .collect();
            let on_devices = session::Buffers::Resident(&mut bufs);
            self.door
                .launch(plan, nd, &mut kargs, on_devices, &shares, &key, &options)
                .map_err(buffer::launcher_err)?
                .report
        };

        for (i, (slot, info)) in slots.iter().zip(&self.infos).enumerate() {
            let (ArgSlot::Buffer { ptr, len }, ArgKind::GlobalBuffer) = (slot, info.kind) else {
                continue;
            };
            let Some(out) = kargs.buffer_at(i as u32) else {
                continue;
            };
            // SAFETY: the caller's contract; `out` is the launcher's own copy.
            let host = unsafe { std::slice::from_raw_parts_mut(*ptr, *len) };
            if host[..] != out.as_bytes()[..] {
                host.copy_from_slice(out.as_bytes());
            }
        }

        let mut text = report.to_string();
        if analyzed {
            text.push_str(&format!("\n  analysis {analysis_ms:.3} ms"));
        }
        let verified = report.verified;
        let mismatch = report.mismatch.clone();
        self.last = Some(Last {
            text: CString::new(text.replace('\0', " ")).unwrap_or_default(),
            report,
            analyzed,
            analysis_ms,
        });
        if verified == Some(false) {
            let at = mismatch
                .map(|m| {
                    format!(
                        ": array '{}' differs first at element {}",
                        m.array, m.elem_idx
                    )
                })
                .unwrap_or_default();
            return err(
                CLPART_VERIFY_FAILED,
                format!(
                    "verification failed: the split run of kernel '{}' differs from the unsplit run{at}",
                    self.kernel
                ),
            );
        }
        Ok(())
    }
}

/// The launcher plan for this launch from the session: the range file's, or
/// the cached analysis of this configuration, or a new analysis. Also says
/// whether the analysis ran now.
fn launcher_plan<'a>(
    session: &'a mut Session,
    kernel: &str,
    infos: &[ArgInfo],
    nd: &NdRange,
    slots: &[ArgSlot],
) -> Result<(&'a mut launcher::Plan, bool)> {
    let mut config = LaunchConfig::new(&nd.global, &nd.local);
    for (slot, info) in slots.iter().zip(infos) {
        if let ArgSlot::Scalar { int: Some(v), .. } = slot {
            config.scalars.insert(info.name.clone(), *v);
        }
    }
    let runtime = runtime()?;
    session
        .plan(&runtime, kernel, &config)
        .map_err(|e| match e {
            session::SessionError::Launch(e) => Error::from(e),
            other => Error::new(CLPART_ANALYSIS_FAILED, other.to_string()),
        })
}

/// Refuses host arrays that overlap when one of them may be written: each
/// argument is its own array to clpart (it copies them separately), so
/// aliasing would change the kernel's result.
fn check_overlaps(kernel: &KernelRanges, infos: &[ArgInfo], slots: &[ArgSlot]) -> Result<()> {
    let may_write = |info: &ArgInfo| match kernel.arrays.iter().find(|a| a.arg_index == info.index)
    {
        Some(a) => matches!(a.mode, Mode::W | Mode::RW),
        None => info.kind == ArgKind::GlobalBuffer,
    };
    let buffers: Vec<(&ArgInfo, usize, usize)> = slots
        .iter()
        .zip(infos)
        .filter_map(|(s, i)| match s {
            ArgSlot::Buffer { ptr, len } => Some((i, *ptr as usize, *len)),
            _ => None,
        })
        .collect();
    for (k, &(a, pa, la)) in buffers.iter().enumerate() {
        for &(b, pb, lb) in &buffers[..k] {
            let overlap = pa < pb.saturating_add(lb) && pb < pa.saturating_add(la);
            if overlap && (may_write(a) || may_write(b)) {
                return err(
                    CLPART_INVALID_ARGUMENT,
                    format!(
                        "arguments {} and {} share host memory and the kernel may write one of them; give each buffer argument its own array",
                        describe(b),
                        describe(a)
                    ),
                );
            }
        }
    }
    Ok(())
}
