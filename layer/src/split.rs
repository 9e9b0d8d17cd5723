//! One application launch turned into a clpart launch.
//!
//! The kernel's arguments are read from the layer's records ([`state`]);
//! which analysis serves the launch, and whether it is ready, is
//! [`crate::analyses`]'s choice (a `launcher::Plan` when it splits, the
//! reason when not; the launch passes through while the analysis is being
//! made). A launch's shares, rounds and measurements are the process's
//! one `session::Door`'s. With automatic shares (`CLPART_LAYER_SPLIT=auto`)
//! its `launcher::Balancer` serves the process, keyed by the kernel, its
//! work-group size and its number of work-groups to the nearest power of
//! two (`balance_key`): an NDRange that shrinks step by step keeps its
//! measurements, while launches of very different sizes keep their own.
//! A split launch then
//!
//! 1. waits for the launch's wait list and finishes the application's
//!    queue, so every earlier command of the application is done;
//! 2. makes clpart's resident copy of each buffer argument current
//!    ([`resident::bring_in`]): read whole from the application's device
//!    only when clpart holds no copy yet or the application wrote the
//!    buffer since (only the elements that changed then reach clpart's
//!    copy, so what its devices hold of the rest stays there); a buffer
//!    backed by the application's host memory (`CL_MEM_USE_HOST_PTR`,
//!    `CL_MEM_ALLOC_HOST_PTR`) is not resident and is read whole;
//! 3. runs `launcher::launch_resident` (through the door) across the
//!    chosen devices (clpart's own contexts and queues): each device gets
//!    only what its slice reads and it lacks, and keeps what it wrote;
//! 4. writes nothing back into resident buffers: those the kernel writes
//!    become stale in the application's copy, which is brought up to date
//!    just before an operation of the application reads them through the
//!    driver ([`resident`]); the span of bytes that changed in a buffer that
//!    is not resident is written back with a blocking write on the
//!    application's queue;
//! 5. when the application asked for an event, returns a marker enqueued
//!    after those writes (complete at once: the launch is done).
//!
//! So an iterative program moves each array between the application's
//! device and the host about once each way per run, and halos per step
//! between clpart's devices. Anything that stops a launch before step 4
//! (an object the layer did not see made, an argument it cannot read, a
//! driver error, a launcher error) sends the launch unchanged to the
//! driver, with the reason recorded. After a failed `launch_resident`, a
//! buffer whose application copy was current is taken from the application
//! again next time, and a stale one is synced before the driver runs the
//! kernel (the launcher leaves it as before the launch, or with elements
//! lost, which the sync reports as an error to the application).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use launcher::{ArgValue, ElemType, HostBuffer, KernelArgs, LaunchOptions, NdRange};
use opencl_sys::{cl_command_queue, cl_event, cl_int, cl_kernel, cl_uint, CL_SUCCESS};
use ranges_format::ArgKind;

use crate::analyses::{Analyses, Choice, Job, KernelKey};
use crate::config::config;
use crate::home;
use crate::report;
use crate::resident;
use crate::slots::{integer_scalars, refuse_early, slots, Slot};
use crate::state::{self, AppCopy, Inside, KernelRec, RawArg};
use crate::target;

/// The arguments of one `clEnqueueNDRangeKernel`.
pub(crate) struct Launch {
    pub(crate) queue: cl_command_queue,
    pub(crate) kernel: cl_kernel,
    pub(crate) work_dim: cl_uint,
    pub(crate) offset: *const usize,
    pub(crate) global: *const usize,
    pub(crate) local: *const usize,
    pub(crate) wait: (cl_uint, *const cl_event),
    pub(crate) event: *mut cl_event,
}

pub(crate) enum Outcome {
    /// The launch ran split (or failed after the application's buffers
    /// were touched): return this code.
    Done(cl_int),
    /// Send the launch to the driver unchanged.
    PassThrough,
    /// Send the launch to the driver unchanged, timed from an empty queue
    /// to its end, for the home choice of this configuration
    /// ([`observe_home`]).
    Probe(String),
}

/// The process's clpart side: the analyses of the kernels seen and the
/// automatic shares.
#[derive(Default)]
struct Engine {
    analyses: Analyses,
    /// Keeps every analyzed source alive, so the address in a
    /// [`KernelKey`] is never reused by another source.
    sources: Vec<Arc<str>>,
    /// The launches' shares, rounds and measurements: automatic over
    /// every device (`CLPART_LAYER_SPLIT=auto`), kept across kernels and
    /// launches for the process.
    door: session::Door,
    /// Per balancer key, whether its launches run at home.
    home: HashMap<String, home::Home>,
    /// Per kernel name, its last balancer key and power of two of
    /// work-groups: a new key of a smaller launch (an NDRange that shrank
    /// past a power of two) starts from its measurements.
    last_key: HashMap<String, (String, u32)>,
    /// What earlier runs measured, and where this run's walls go.
    history: crate::history::History,
}

/// The wall (ms) of a home probe of the launch configuration `key`.
pub(crate) fn observe_home(key: &str, wall_ms: f64) {
    let mut engine = ENGINE.lock().unwrap_or_else(|p| p.into_inner());
    let engine = engine.get_or_insert_with(Engine::default);
    engine
        .home
        .entry(key.to_string())
        .or_default()
        .observe(wall_ms);
}

static ENGINE: Mutex<Option<Engine>> = Mutex::new(None);

/// Tries the launch split.
///
/// # Safety
/// `launch` holds the application's arguments of `clEnqueueNDRangeKernel`
/// (pointers valid as OpenCL requires for `work_dim` entries).
pub(crate) unsafe fn try_split(launch: &Launch) -> Outcome {
    // A kernel already known to stay unsplit at this size passes through
    // without its record being copied (the pass-through overhead).
    // the launches after the first of a stretch at home (a stay, or while
    // an analysis is made), when it ends here
    let mut stretch_passed = None;
    let known = state::with(|s| {
        let k = s.kernels.get_mut(&(launch.kernel as usize))?;
        let u = k.unsplit.as_mut()?;
        // SAFETY: the caller's contract.
        if !unsafe { u.matches(launch.work_dim, launch.global, launch.local) } {
            return None;
        }
        // clpart holds more of its buffers newer than the application
        // does: the layer decides again (the launch may run where they are)
        if u.until_stale {
            let buffers = k.buffers();
            if resident::unsplit_where_kept(s, &buffers) {
                if let Some(k) = s.kernels.get_mut(&(launch.kernel as usize)) {
                    k.unsplit = None;
                }
                return None;
            }
        }
        let k = s.kernels.get_mut(&(launch.kernel as usize))?;
        let u = k.unsplit.as_mut()?;
        // a stretch ended (its launches made, or an analysis in progress
        // finished, this one or another): the layer decides again
        if let Some(left) = u.left {
            let finished = u
                .until_finished
                .is_some_and(|n| n != crate::analyses::finished_jobs());
            if left == 0 || finished {
                stretch_passed = Some(u.length.saturating_sub(left));
                k.unsplit = None;
                return None;
            }
        }
        match &mut u.left {
            Some(n) => {
                *n -= 1;
                Some((u.name.clone(), u.reason.clone()))
            }
            None => Some((u.name.clone(), u.reason.clone())),
        }
    });
    if let Some((name, why)) = known {
        report::whole(&name, &why);
        return Outcome::PassThrough;
    }
    let Some(rec) = state::with(|s| s.kernels.get(&(launch.kernel as usize)).cloned()) else {
        // A kernel the layer did not see made (clCloneKernel, a kernel of
        // clpart's own): nothing to record.
        return Outcome::PassThrough;
    };
    if let Some(why) = config().pass_through {
        return pass(&rec.name, why.to_string());
    }
    // SAFETY: the caller's contract.
    let nd = match unsafe { ndrange(launch) } {
        Ok(nd) => nd,
        Err(why) => return pass(&rec.name, why),
    };
    let mut engine = ENGINE.lock().unwrap_or_else(|p| p.into_inner());
    let engine = engine.get_or_insert_with(Engine::default);
    match split_with(engine, launch, &rec, &nd, stretch_passed) {
        Ok(outcome) => outcome,
        Err(why) => pass(&rec.name, why),
    }
}

fn pass(kernel: &str, why: String) -> Outcome {
    report::whole(kernel, &why);
    Outcome::PassThrough
}

/// The launch's NDRange; without a local size, clpart picks one as the
/// driver may (the largest divisor of the global size up to 64 in
/// dimension 0, 1 in the others).
///
/// # Safety
/// As [`try_split`].
unsafe fn ndrange(l: &Launch) -> Result<NdRange, String> {
    let dims = l.work_dim as usize;
    if !(1..=3).contains(&dims) || l.global.is_null() {
        return Err(format!("work_dim {dims} or the global size is invalid"));
    }
    let read = |p: *const usize| -> Vec<u64> {
        // SAFETY: `dims` entries (the caller's contract).
        (0..dims).map(|d| unsafe { *p.add(d) } as u64).collect()
    };
    let global = read(l.global);
    let local = if l.local.is_null() {
        NdRange::default_local(&global)
    } else {
        read(l.local)
    };
    let offset = if l.offset.is_null() {
        vec![0; dims]
    } else {
        read(l.offset)
    };
    NdRange::with_offset(&global, &local, &offset).map_err(|e| e.to_string())
}

/// `stretch_passed`: the launch ends a stretch at home of this size (a stay,
/// or while its analysis was made) of this many launches after the first.
fn split_with(
    engine: &mut Engine,
    launch: &Launch,
    rec: &KernelRec,
    nd: &NdRange,
    stretch_passed: Option<u32>,
) -> Result<Outcome, String> {
    let started = std::time::Instant::now();
    let Some((source, options)) = &rec.program else {
        return Err("the program was not made with clCreateProgramWithSource".into());
    };
    refuse_early(rec)?;
    let options: Vec<String> = options.to_vec();
    let _inside = Inside::enter();
    let (balance_key, size) = balance_key(&rec.name, nd, !launch.local.is_null());
    let auto = config().shares.is_none() && config().auto;
    if auto {
        let program = (source, options.as_slice());
        let home = home_or_clpart(
            engine,
            launch,
            rec,
            program,
            (&balance_key, size),
            stretch_passed,
        );
        if let Some(home) = home {
            return home;
        }
    }
    let src_key = Arc::as_ptr(source) as *const u8 as usize;
    if !engine.sources.iter().any(|s| Arc::ptr_eq(s, source)) {
        engine.sources.push(source.clone());
    }
    let kernel_key: KernelKey = (src_key, rec.name.clone(), options.clone());
    engine.analyses.collect();
    let kernel = engine
        .analyses
        .kernels
        .entry(kernel_key.clone())
        .or_default();

    // The arguments, as the kernel declares them (once an analysis gave
    // its argument list; the first launch's analysis does not need them).
    let ints = match &kernel.infos {
        Some(Ok(infos)) => integer_scalars(&slots(rec, infos)?, infos),
        Some(Err(e)) => return Err(e.clone()),
        None => Vec::new(),
    };
    let job = |config| Job {
        kernel_key: kernel_key.clone(),
        kernel: rec.name.clone(),
        source: source.clone(),
        options: options.clone(),
        config,
        launch_local: nd.local.clone(),
    };
    // buffers clpart holds newer than the application: a launch passed
    // through would move them back (and the next split one again), so it
    // waits for its analysis in progress instead, as long as twice those
    // syncs would take (an analysis may take seconds, 1 MiB moves in 1 ms)
    let handles = rec.buffers();
    let (stale_bytes, where_kept) = state::with(|s| {
        let kept = resident::unsplit_where_kept(s, &handles);
        (resident::stale_bytes(s, &handles), kept)
    });
    let wait = std::time::Duration::from_secs_f64(2.0 * home::sync_ms(stale_bytes) / 1e3);
    // (read before: a job finished while choosing ends the stretch below)
    let finished = crate::analyses::finished_jobs();
    let (key, in_place) = match kernel.choose(job, nd, !launch.local.is_null(), &ints, wait) {
        Choice::Split(key) => (key, false),
        // clpart holds more of its buffers newer than the application does:
        // the launch runs unsplit on clpart's devices, where they are,
        // rather than move them back (and the next split launch move them
        // again)
        // (across MPI ranks, an unsplit launch runs on the application's
        // device after the ranks' elements are gathered)
        Choice::Whole(_, _, Some(key))
            if where_kept && kernel.in_place(&key).is_some() && !crate::ranks::active() =>
        {
            (key, true)
        }
        Choice::Whole(why, for_good, in_place) => {
            if for_good {
                let until_stale = in_place.is_some();
                keep_unsplit(launch, &rec.name, &why, None, None, until_stale);
            }
            return Err(why);
        }
        Choice::Pending => {
            // the launches of this size pass through at once until the
            // worker finishes a job; before the argument list is known no
            // scalar value is followed (`KernelAnalyses::choose`), so none
            // is missed
            if kernel.infos.is_none() {
                // with automatic shares, timed: home's wall in a stream,
                // before clpart's devices are first tried, and a first
                // launch probed (a kernel launched once a run has its
                // home measured while its analysis is made)
                let home = engine.home.get_mut(&balance_key).filter(|_| auto);
                let probe = home.as_ref().is_some_and(|h| h.unmeasured()) && may_finish(launch);
                let length = match home {
                    Some(h) => h.pending_began(clock_ms()),
                    None => home::MAX_PENDING_STRETCH,
                };
                remember_pending(launch, &rec.name, finished, length);
                if probe {
                    report::whole(&rec.name, crate::analyses::PENDING);
                    return Ok(Outcome::Probe(balance_key));
                }
            }
            return Err(crate::analyses::PENDING.into());
        }
    };
    // known now: the analysis that gave the plan gave the argument list
    let Some(Ok(infos)) = kernel.infos.clone() else {
        return Err("the kernel's argument list is not known".into());
    };
    let slots = slots(rec, &infos)?;
    let plan = match in_place {
        true => kernel.in_place(&key),
        false => kernel.plan(&key),
    };
    let Some(plan) = plan else {
        return Err("no plan".into());
    };
    // the driver chooses the work-group size of a launch without one, and
    // clpart's slices would run with other sizes
    if launch.local.is_null() {
        if let Some(what) = &plan.kernel().group_size_use {
            let why = format!(
                "launched without a work-group size, which the driver chooses, and its results may depend on it: {what}"
            );
            remember_unsplit(launch, &rec.name, &why, None);
            return Err(why);
        }
    }
    if rec.read_only.is_none() {
        let read_only: Arc<[u32]> = plan
            .kernel()
            .arrays
            .iter()
            .filter(|a| a.mode == ranges_format::Mode::R)
            .map(|a| a.arg_index)
            .collect();
        state::with(|s| {
            if let Some(k) = s.kernels.get_mut(&(launch.kernel as usize)) {
                k.read_only = Some(read_only);
            }
        });
    }
    let runtime = plan.runtime();
    let n_devices = runtime.devices().len();
    let choice = match &config().shares {
        Some(Ok(s)) => session::Shares::Fixed(s.clone()),
        Some(Err(e)) => return Err(e.clone()),
        None if config().auto => session::Shares::Auto((0..n_devices).collect()),
        None => session::Shares::Fixed(
            (0..n_devices)
                .map(|i| (i, 1.0 / n_devices as f64))
                .collect(),
        ),
    };
    // the devices the user named are checked before anything is synced
    // (automatic shares take the runtime's own)
    if let session::Shares::Fixed(shares) = &choice {
        for &(d, _) in shares {
            runtime.device(d).map_err(|e| e.to_string())?;
        }
    }

    let t = target();
    // 1. Everything the application enqueued before is done. Not while a
    // user event of the application's is pending: a command ahead in the
    // queue may wait for it, and the application sets it only later.
    crate::events::reap();
    if crate::events::user_event_pending() {
        return Err("a user event of the application is not complete (finishing its queue could wait for it)".into());
    }
    let (n_wait, wait) = launch.wait;
    if n_wait > 0 {
        // SAFETY: the application's wait list of `n_wait` events.
        unsafe { check_no_pending_user_event(n_wait, wait)? };
        let f = t.clWaitForEvents.ok_or("clWaitForEvents is missing")?;
        // SAFETY: the application's wait list.
        let r = unsafe { f(n_wait, wait) };
        if r != CL_SUCCESS {
            return Err(format!("waiting for the launch's wait list failed ({r})"));
        }
    }
    let finish = t.clFinish.ok_or("clFinish is missing")?;
    // SAFETY: the application's queue.
    let r = unsafe { finish(launch.queue) };
    if r != CL_SUCCESS {
        return Err(format!("clFinish on the application's queue failed ({r})"));
    }

    // 2. The buffer arguments: a resident buffer is read from the
    // application's device only when clpart holds no copy or the
    // application wrote it since; the others are read whole.
    let mut held = resident::hold();
    let mut app_sync = 0u64;
    let ranks = crate::ranks::active();
    // across ranks: the buffers kept off the resident path, as copies for
    // this launch
    let mut temps: Vec<(u32, usize, resident::Resident)> = Vec::new();
    let mut contents: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut bound: Vec<(u32, usize)> = Vec::new();
    let mut values = Vec::with_capacity(slots.len());
    for (slot, info) in slots.iter().zip(infos.iter()) {
        values.push(match slot {
            Slot::Scalar { bytes, int } => ArgValue::Scalar {
                bytes: bytes.clone(),
                int: *int,
            },
            Slot::Local { bytes } => ArgValue::Local { bytes: *bytes },
            Slot::Buffer { mem, size, flags } => {
                let elem = ElemType::parse(&info.elem_type, info.elem_size);
                if resident::eligible(*flags) {
                    app_sync += resident::bring_in(&mut held, launch.queue, *mem, *size, &elem)?;
                    bound.push((info.index, *mem));
                    // A placeholder: the launch uses the resident copy.
                    ArgValue::Buffer(HostBuffer::from_bytes(
                        elem.clone(),
                        vec![0; elem.size.max(1) as usize],
                    ))
                } else {
                    let t = std::time::Instant::now();
                    let bytes = resident::read_app(launch.queue, *mem, *size)?;
                    report::synced_in(*size as u64, t.elapsed());
                    app_sync += *size as u64;
                    contents.insert(*mem, bytes.clone());
                    if ranks {
                        // across ranks every buffer is a held one: this one
                        // for the launch only
                        let placeholder = vec![0; elem.size.max(1) as usize];
                        temps.push((
                            info.index,
                            *mem,
                            resident::Resident::new(elem.clone(), bytes),
                        ));
                        ArgValue::Buffer(HostBuffer::from_bytes(elem, placeholder))
                    } else {
                        ArgValue::Buffer(HostBuffer::from_bytes(elem, bytes))
                    }
                }
            }
        });
    }

    // 3. The split launch, over the resident copies.
    let mut kargs =
        KernelArgs::from_values(&rec.name, &infos, values).map_err(|e| e.to_string())?;
    // A first automatic launch of this configuration, on devices of
    // unknown speed, runs in two rounds where that pays, as `clpart run
    // --split auto` (session::Door; the launch log shows the rounds).
    // (a 1-D kernel launched as `[n, 1]` keeps its `work_dim`: the launcher
    // takes trailing dimensions of one work-item, so `get_work_dim()` is
    // what the application asked for)
    let result = {
        let mut taken: Vec<(u32, usize, resident::Resident)> = bound
            .iter()
            .filter_map(|&(i, mem)| held.remove(&mem).map(|r| (i, mem, r)))
            .collect();
        let result = if ranks {
            let mut all: Vec<(u32, usize, &mut resident::Resident)> = taken
                .iter_mut()
                .chain(temps.iter_mut())
                .map(|(i, mem, r)| (*i, *mem, r))
                .collect();
            across_ranks(plan, nd, &mut kargs, &mut all, &balance_key)
        } else {
            let mut refs: Vec<(u32, &mut launcher::DeviceBuffer)> =
                taken.iter_mut().map(|(i, _, r)| (*i, &mut r.buf)).collect();
            // the layer's report has no exact footprint: no counts
            let options = LaunchOptions {
                exact_bytes: false,
                ..Default::default()
            };
            let on_devices = session::Buffers::Resident(&mut refs);
            engine
                .door
                .launch(
                    plan,
                    nd,
                    &mut kargs,
                    on_devices,
                    &choice,
                    &balance_key,
                    &options,
                )
                .map(|l| (l, None))
                .map_err(|e| Failed::Launch(e.to_string()))
        };
        for (_, mem, r) in taken {
            held.insert(mem, r);
        }
        // the copies for this launch: their contents back into the
        // arguments (step 4 writes back what changed)
        let result = result.and_then(|l| {
            for (i, mem, mut r) in temps.drain(..) {
                let host = crate::ranks::gather(mem, &mut r)
                    .map_err(Failed::Rank)
                    .and_then(|_| r.buf.into_host().map_err(|e| Failed::Launch(e.to_string())));
                crate::ranks::forget(mem);
                *kargs.buffer_at_mut(i).expect("a buffer argument") = host?;
            }
            Ok(l)
        });
        for (_, mem, _) in temps.drain(..) {
            crate::ranks::forget(mem);
        }
        result
    };
    let (report, rounds, mpi) = match result {
        Ok((l, mpi)) => (l.report, l.rounds, mpi),
        Err(Failed::Rank(why)) => {
            // the elements only a rank held are lost: the application gets
            // an error, never wrong data
            report::failed(&rec.name, &why);
            return Ok(Outcome::Done(opencl_sys::CL_OUT_OF_RESOURCES));
        }
        Err(Failed::Launch(e)) => {
            // The launcher leaves each buffer as it was before the launch,
            // or with elements lost: what the application's copy holds is
            // taken again next time, and a stale one is synced (or its loss
            // reported) before the driver runs the kernel.
            for &(_, mem) in &bound {
                if let Some(r) = held.get_mut(&mem) {
                    r.launched();
                }
                state::with(|s| {
                    if let Some(b) = s.buffers.get_mut(&mem) {
                        if b.app == AppCopy::Current {
                            b.app = AppCopy::Newer;
                        }
                    }
                });
            }
            // not tried again at this size: the same launch would fail
            // again, after the same syncs
            let why = format!("the split launch failed: {e}");
            remember_unsplit(launch, &rec.name, &why, None);
            return Err(why);
        }
    };
    // run unsplit because a launch-time assumption of the analysis failed
    // at this launch's values: the next launches try the analysis
    // specialized on the values that stay the same
    let assumption_failed = report.assumption_failed;
    // the whole launch as the application waits for it (its queue
    // finished, its buffers brought in), to compare with home
    if let Some(h) = engine.home.get_mut(&balance_key) {
        h.observe_clpart(started.elapsed().as_secs_f64() * 1e3);
    }
    // What the kernel may write is now newer in clpart's copy.
    for &(i, mem) in &bound {
        // (where the guard caught a write the analysis did not see, the
        // kernel re-ran writing what it writes: none is read only)
        let read_only = !report.guard_fired
            && plan
                .kernel()
                .arrays
                .iter()
                .any(|a| a.arg_index == i && a.mode == ranges_format::Mode::R);
        if !read_only {
            if let Some(r) = held.get_mut(&mem) {
                r.launched();
            }
            state::with(|s| s.set_app(mem, AppCopy::Stale));
        }
    }
    drop(held);
    if assumption_failed {
        if let Some(k) = engine.analyses.kernels.get_mut(&kernel_key) {
            k.failed_at_launch(&key);
        }
    }

    // 4. What changed in the buffers kept off the resident path goes back
    // into the application's buffers.
    let mut written: Vec<usize> = Vec::new();
    for (i, (slot, info)) in slots.iter().zip(infos.iter()).enumerate() {
        let (Slot::Buffer { mem, .. }, ArgKind::GlobalBuffer) = (slot, info.kind) else {
            continue;
        };
        if written.contains(mem) {
            continue;
        }
        let (Some(new), Some(old)) = (kargs.buffer_at(i as u32), contents.get(mem)) else {
            continue;
        };
        let new = new.as_bytes();
        let Some(first) = new.iter().zip(old).position(|(a, b)| a != b) else {
            continue;
        };
        let last = new.len()
            - new
                .iter()
                .rev()
                .zip(old.iter().rev())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
        let t = std::time::Instant::now();
        let r = resident::write_app(launch.queue, *mem, first, &new[first..last]);
        if r != CL_SUCCESS {
            // The application's buffers are partly updated: running the
            // kernel again could be wrong, so the driver's error goes back.
            report::failed(
                &rec.name,
                &format!("writing results back to the application's buffer failed ({r})"),
            );
            return Ok(Outcome::Done(r));
        }
        report::synced_out((last - first) as u64, 0, t.elapsed());
        app_sync += (last - first) as u64;
        written.push(*mem);
    }

    // 5. The launch's event: complete once the results are in place.
    if !launch.event.is_null() {
        let marker = t
            .clEnqueueMarkerWithWaitList
            .ok_or("clEnqueueMarkerWithWaitList is missing");
        let r = match marker {
            // SAFETY: the application's queue and event out-pointer.
            Ok(f) => unsafe { f(launch.queue, 0, std::ptr::null(), launch.event) },
            Err(_) => opencl_sys::CL_OUT_OF_RESOURCES,
        };
        if r != CL_SUCCESS {
            report::failed(
                &rec.name,
                &format!("the launch's event could not be made ({r})"),
            );
            return Ok(Outcome::Done(r));
        }
        // SAFETY: the driver just wrote the marker there.
        let event = unsafe { *launch.event };
        crate::events::split_launch_event(event, started.elapsed().as_nanos() as u64);
    }
    report::log_launch(
        &rec.name,
        (source, &options),
        &slots,
        &infos,
        &report,
        &report::HowRan {
            rounds,
            wall: started.elapsed(),
            ranks: mpi.as_ref().map(|(p, b)| (p.as_slice(), *b)),
        },
    );
    report::launched(&rec.name, &report, app_sync, mpi.map(|(_, b)| b));
    Ok(Outcome::Done(CL_SUCCESS))
}

/// Why a launch through the door or across ranks did not run.
enum Failed {
    /// A rank failed: what only the ranks held is lost.
    Rank(String),
    /// The launch did not run (the launcher's error).
    Launch(String),
}

/// Each rank's part and the element bytes over MPI of a launch across
/// ranks.
type RanksPart = Option<(Vec<crate::ranks::RankPart>, u64)>;

/// The launch across MPI ranks ([`crate::ranks`]), as the door's.
fn across_ranks(
    plan: &mut launcher::Plan,
    nd: &NdRange,
    kargs: &mut KernelArgs,
    bound: &mut [(u32, usize, &mut resident::Resident)],
    key: &str,
) -> Result<(session::Launched, RanksPart), Failed> {
    use crate::ranks::Failure;
    match crate::ranks::launch(plan, nd, kargs, bound, key) {
        Ok((report, parts, bytes)) => Ok((
            session::Launched {
                report,
                shares: Vec::new(),
                rounds: 1,
            },
            Some((parts, bytes)),
        )),
        Err(Failure::Rank(why)) => Err(Failed::Rank(why)),
        Err(Failure::Launch(why)) => Err(Failed::Launch(why)),
    }
}

/// With automatic shares, whether the launch runs at home (`Some`: a
/// probe, or passed through for a stretch) or on clpart's devices
/// (`None`), decided before its analysis is looked at: a configuration
/// that stays at home neither reads its analysis nor builds its
/// subkernels. A configuration seen for the first time starts from what
/// an earlier run measured ([`crate::history`]), else from a larger size
/// of the same kernel.
fn home_or_clpart(
    engine: &mut Engine,
    launch: &Launch,
    rec: &KernelRec,
    (source, options): (&Arc<str>, &[String]),
    (balance_key, size): (&str, u32),
    stretch_passed: Option<u32>,
) -> Option<Result<Outcome, String>> {
    let settled = engine
        .door
        .balancer()
        .is_some_and(|b| b.best_wall(balance_key).is_some());
    if !engine.home.contains_key(balance_key) {
        let record = engine
            .history
            .recall(launch.queue, source, options, balance_key);
        // the devices' rates: the first launch at their shares, no rounds
        if let Some(rates) = record.as_ref().map(|r| &r.rates).filter(|r| !r.is_empty()) {
            if let Ok(n) = crate::analyses::runtime().map(|r| r.devices().len()) {
                engine
                    .door
                    .balancer_over(&(0..n).collect::<Vec<_>>())
                    .remember_rates(balance_key, rates);
            }
        }
        // both sides measured, else one side alone and short
        let remembered = record.and_then(|r| match (r.both(), r.home_ms, r.clpart_ms) {
            (Some(w), _, _) => Some(home::Home::remembered(w)),
            (None, Some(h), _) if h < home::REMEMBERED_HOME_MS => {
                Some(home::Home::remembered_home(h))
            }
            // (launched once a run: more launches measure the devices'
            // rates, and home is probed within the run)
            (None, _, Some(c)) if c < home::PROBED_FIRST_MS && r.rates.is_empty() => {
                Some(home::Home::remembered_clpart(c))
            }
            _ => None,
        });
        // only from a larger size: a launch with fewer work-groups
        // gains less from splitting, never more
        let from = remembered.unwrap_or_else(|| {
            engine
                .last_key
                .get(&rec.name)
                .filter(|(_, s)| *s > size)
                .and_then(|(k, _)| engine.home.get(k))
                .map(home::Home::inherited)
                .unwrap_or_default()
        });
        engine.home.insert(balance_key.to_string(), from);
    }
    if engine.last_key.get(&rec.name).map(|(k, _)| k.as_str()) != Some(balance_key) {
        engine
            .last_key
            .insert(rec.name.clone(), (balance_key.to_string(), size));
    }
    // a stretch at home goes on through launches of other sizes (an
    // NDRange that changes at every launch)
    if let Some(n) = carried_stretch(launch).filter(|&n| n > 0) {
        remember_unsplit(launch, &rec.name, home::AT_HOME, Some(n - 1));
        return Some(Err(home::AT_HOME.into()));
    }
    let switch = switch_bytes(rec);
    let at_home = engine.home.get_mut(balance_key).expect("inserted above");
    if let Some(n) = stretch_passed {
        at_home.stretch_done(n);
    }
    // a stretch at home ends: its launches are done once the application's
    // queue is, and only then is its time what they cost (enqueued, they
    // return before the device has run them); untimed where finishing
    // could wait on a user event the application sets later
    let now = if at_home.stretch_ended() {
        let finish = target().clFinish;
        let finished = may_finish(launch)
            // SAFETY: the application's queue.
            && finish.is_some_and(|f| unsafe { f(launch.queue) } == CL_SUCCESS);
        finished.then(clock_ms)
    } else {
        Some(clock_ms())
    };
    match at_home.next(settled, switch, now) {
        home::Choice::Clpart => None,
        // timed between two clFinish
        home::Choice::Probe if may_finish(launch) => {
            report::whole(&rec.name, home::AT_HOME);
            Some(Ok(Outcome::Probe(balance_key.to_string())))
        }
        home::Choice::Probe => Some(Err(home::AT_HOME.into())),
        home::Choice::Stay(n) => {
            remember_unsplit(launch, &rec.name, home::AT_HOME, Some(n));
            Some(Err(home::AT_HOME.into()))
        }
    }
}

/// Whether the layer may finish the application's queue at this launch:
/// not while a command may wait for a user event the application sets
/// later (a pending one, or one in the launch's wait list).
fn may_finish(launch: &Launch) -> bool {
    launch.wait.0 == 0 && !crate::events::user_event_pending()
}

/// Milliseconds since the layer first looked at the time.
fn clock_ms() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1e3
}

/// Stores what this run measured of each configuration for the next run
/// ([`crate::history`]); at exit.
pub(crate) fn save_history() {
    let Ok(mut engine) = ENGINE.try_lock() else {
        return;
    };
    let Some(engine) = engine.as_mut() else {
        return;
    };
    let balancer = engine.door.balancer();
    let measured: Vec<(String, crate::history::Record)> = engine
        .home
        .iter()
        .filter_map(|(k, h)| {
            let rates: Vec<(usize, f64)> = balancer
                .filter(|_| h.rates_measured())
                .map(|b| b.rates(k))
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(d, r)| Some((d, r?)))
                .collect();
            let record = crate::history::Record {
                walls: h.walls(),
                home_ms: h.home_alone(),
                clpart_ms: h.clpart_alone(),
                rates,
            };
            (record != crate::history::Record::default()).then(|| (k.clone(), record))
        })
        .collect();
    engine.history.save(measured);
}

/// What running this launch on the other side would move
/// ([`home::Switch`]): to clpart's devices, the buffers the application's
/// device holds newer, and back, those the kernel may write; to the
/// application's device, the buffers clpart's devices hold newer, and back,
/// again those the kernel may write (a launch at home may change any of
/// their bytes).
fn switch_bytes(rec: &KernelRec) -> home::Switch {
    let mut seen: Vec<usize> = Vec::new();
    let mut sw = home::Switch::default();
    let held = resident::hold();
    for (i, arg) in rec.args.iter().enumerate() {
        let Some(h) = arg.as_ref().and_then(RawArg::handle) else {
            continue;
        };
        let Some((root, size, app)) = state::with(|s| {
            let root = s.root(h)?;
            s.buffers.get(&root).map(|b| (root, b.size as u64, b.app))
        }) else {
            continue;
        };
        // before an analysis told which arguments are read-only: any
        let written = !rec
            .read_only
            .as_ref()
            .is_some_and(|r| r.contains(&(i as u32)));
        if seen.contains(&root) {
            continue;
        }
        seen.push(root);
        match (app, held.get(&root)) {
            // a sync writes a stale buffer back whole
            (AppCopy::Stale, Some(_)) => sw.to_home += size,
            (AppCopy::Current, Some(_)) => {}
            _ => sw.to_clpart += size,
        }
        if written {
            sw.to_clpart += size;
            sw.to_home += size;
        }
    }
    sw
}

/// Refuses a wait list holding a user event that is not complete: the
/// application may set it only after this call returns, so waiting here
/// could wait forever; the driver queues such a launch instead.
///
/// # Safety
/// `wait` points to `n` events (the OpenCL contract of a wait list).
unsafe fn check_no_pending_user_event(n: cl_uint, wait: *const cl_event) -> Result<(), String> {
    let info = target().clGetEventInfo.ok_or("clGetEventInfo is missing")?;
    let query = |e: cl_event, what: opencl_sys::cl_event_info| -> Option<i64> {
        let mut v: u32 = 0;
        // SAFETY: a 4-byte answer (cl_command_type and cl_int both are).
        let r = unsafe {
            info(
                e,
                what,
                std::mem::size_of::<u32>(),
                &mut v as *mut u32 as *mut c_void,
                std::ptr::null_mut(),
            )
        };
        (r == CL_SUCCESS).then_some(v as i32 as i64)
    };
    for i in 0..n as usize {
        // SAFETY: the caller's contract.
        let e = unsafe { *wait.add(i) };
        let user =
            query(e, opencl_sys::CL_EVENT_COMMAND_TYPE) == Some(opencl_sys::CL_COMMAND_USER as i64);
        let status = query(e, opencl_sys::CL_EVENT_COMMAND_EXECUTION_STATUS);
        if user && status != Some(opencl_sys::CL_COMPLETE as i64) {
            return Err("the launch waits for a user event that is not complete".into());
        }
    }
    Ok(())
}

/// The balancer's key of a launch: the kernel, its work-group size and its
/// number of work-groups to the nearest power of two, so that an NDRange
/// that shrinks step by step (LU, Gram-Schmidt) keeps its measurements
/// (rates are per work-group) while launches of very different sizes,
/// which may differ in whether a split pays, keep their own.
/// Without a local size from the application (`given_local` false) the
/// work-group size clpart picks follows the global size's divisors, so the
/// key is the number of work-items instead. Also returns that power of two.
fn balance_key(kernel: &str, nd: &NdRange, given_local: bool) -> (String, u32) {
    let log2 = |n: u64| (n.max(1) as f64).log2().round() as u32;
    if !given_local {
        let size = log2(nd.global.iter().product());
        return (format!("{kernel} local any items ~2^{size}"), size);
    }
    let groups: u64 = nd
        .global
        .iter()
        .zip(&nd.local)
        .map(|(&g, &l)| g.div_ceil(l.max(1)))
        .product();
    let local: Vec<String> = nd.local.iter().map(u64::to_string).collect();
    let size = log2(groups);
    (
        format!("{kernel} local {} groups ~2^{size}", local.join("x")),
        size,
    )
}

/// The launches left in the kernel's stretch at home, recorded at another
/// size (the record is taken: the launch records its own).
fn carried_stretch(launch: &Launch) -> Option<u32> {
    state::with(|s| {
        let k = s.kernels.get_mut(&(launch.kernel as usize))?;
        let n = k.unsplit.as_ref()?.left?;
        k.unsplit = None;
        Some(n)
    })
}

/// Records on the kernel that its launches of this size stay unsplit
/// (`why`) whatever its scalar arguments: for good, or for the next
/// `left` launches.
fn remember_unsplit(launch: &Launch, name: &str, why: &str, left: Option<u32>) {
    keep_unsplit(launch, name, why, left, None, false);
}

/// [`remember_unsplit`], the stretch also ending once the worker has
/// finished other than `until_finished` jobs.
fn keep_unsplit(
    launch: &Launch,
    name: &str,
    why: &str,
    left: Option<u32>,
    until_finished: Option<u64>,
    until_stale: bool,
) {
    let dims = launch.work_dim as usize;
    let read = |p: *const usize| -> Vec<usize> {
        // SAFETY: `dims` entries (checked valid by `ndrange` before).
        (0..dims).map(|d| unsafe { *p.add(d) }).collect()
    };
    let u = state::Unsplit {
        global: read(launch.global),
        local: (!launch.local.is_null()).then(|| read(launch.local)),
        name: name.into(),
        reason: why.into(),
        left,
        length: left.unwrap_or(0),
        until_finished,
        until_stale,
    };
    state::with(|s| {
        if let Some(k) = s.kernels.get_mut(&(launch.kernel as usize)) {
            k.unsplit = Some(u);
        }
    });
}

/// Records on the kernel that its launches of this size pass through while
/// its analysis is in progress: until the worker finishes a job, and at
/// most `length` of them ([`home::Home::pending_began`]; a program of
/// thousands of tiny launches otherwise pays the whole decision at each).
/// `finished`: the worker's finished jobs before the launch looked.
fn remember_pending(launch: &Launch, name: &str, finished: u64, length: u32) {
    keep_unsplit(
        launch,
        name,
        crate::analyses::PENDING,
        Some(length),
        Some(finished),
        false,
    );
}
