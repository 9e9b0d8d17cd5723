//! The application's buffers kept resident on clpart's devices across split
//! launches, and the syncs that keep the application's own copy (on its
//! device, through the driver) correct wherever the application can look.
//!
//! The layer keeps one `launcher::DeviceBuffer` per application buffer a
//! split launch used ([`Resident`]), and each buffer's record says which
//! copy is current ([`AppCopy`]):
//!
//! - a split launch reads into clpart's copy only a buffer whose
//!   application copy is [`AppCopy::Newer`] (whole, from the application's
//!   device; when clpart's host copy is complete, only the elements that
//!   differ are written into it, so what its devices hold of the rest stays
//!   valid), runs `launcher::launch_resident` and writes nothing back: the
//!   buffers the kernel writes become [`AppCopy::Stale`];
//! - an operation of the application that reads a stale buffer through the
//!   driver (a read, a map, a copy, a partial write or fill, a kernel the
//!   layer passes to the driver) is preceded by a sync ([`sync_out`]):
//!   clpart's copy is gathered on the host and written whole into the
//!   application's buffer with a non-blocking write on the operation's
//!   queue, ordered before it ([`events::write_ordered`]: never a wait for
//!   the application's own commands, which may wait for a user event it
//!   sets later); the operation is then made unchanged (its blocking flag,
//!   events and wait list keep their meaning);
//! - an operation that writes a buffer through the driver makes its
//!   application copy [`AppCopy::Newer`] ([`written`]); a map for writing
//!   does so again at its unmap;
//! - `clFinish` and `clWaitForEvents` need nothing: the application sees a
//!   buffer's contents only through reads and maps;
//! - the release of the application's last reference drops the resident
//!   copy ([`gone`]).
//!
//! Buffers backed by the application's host memory (`CL_MEM_USE_HOST_PTR`,
//! `CL_MEM_ALLOC_HOST_PTR`), whose host pointer must hold the results
//! whenever the application may look, are never resident ([`eligible`]):
//! a split launch reads them whole and writes back what changed, as before.
//! Nor is SVM: a kernel with an SVM argument or `clSetKernelExecInfo` runs
//! on the application's device, and the `clEnqueueSVM*` commands pass
//! through untouched, since SVM memory can back only a
//! `CL_MEM_USE_HOST_PTR` buffer, which is never resident either.
//!
//! A sync that fails (clpart's copy lost elements when a device failed, or
//! the driver refused the write) makes the application's call return the
//! error without calling the driver, and the report says why.
//!
//! Locks: the map of resident copies is taken after the split engine's
//! lock and never with the state's; clpart's own threads (the launcher's
//! per-device threads, which are not marked [`Inside`]) reach it only for
//! buffers marked resident, which are the application's.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use launcher::{DeviceBuffer, ElemType, HostBuffer};
use opencl_sys::{
    cl_command_queue, cl_int, cl_map_flags, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION,
    CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_USE_HOST_PTR, CL_OUT_OF_RESOURCES, CL_SUCCESS,
    CL_TRUE,
};

use crate::events;
use crate::report;
use crate::state::{self, AppCopy, BufferRec, Inside, RawArg};
use crate::target;

/// clpart's copy of one application buffer.
pub(crate) struct Resident {
    pub(crate) buf: DeviceBuffer,
    /// The host copy holds every element (none is valid on clpart's
    /// devices only), so new contents from the application can be compared
    /// with it.
    pub(crate) host_whole: bool,
}

impl Resident {
    /// A copy of the application's `bytes`, as elements `elem`, valid on
    /// the host.
    pub(crate) fn new(elem: ElemType, bytes: Vec<u8>) -> Resident {
        Resident {
            buf: DeviceBuffer::new(HostBuffer::from_bytes(elem, bytes)),
            host_whole: true,
        }
    }

    /// After a launch on clpart's devices that may have written the
    /// buffer: the host copy may lack elements, and the next sync writes
    /// the whole buffer back.
    ///
    /// Not only what the host copy lacks is newer than the application's
    /// copy: a launch the launcher runs unsplit on one device, or a merge
    /// of may-writes, can leave written elements valid on the host (adi
    /// under automatic shares lost 475 elements when syncs wrote back only
    /// what the host lacked). Narrowing the sync needs the launcher to
    /// report the elements a launch wrote.
    pub(crate) fn launched(&mut self) {
        self.host_whole = false;
    }
}

/// The resident copies by the application's buffer handle.
pub(crate) type Residents = HashMap<usize, Resident>;

static RESIDENTS: Mutex<Option<Residents>> = Mutex::new(None);

/// The resident copies, locked (never while the state is locked).
pub(crate) struct Held(MutexGuard<'static, Option<Residents>>);

impl std::ops::Deref for Held {
    type Target = Residents;
    fn deref(&self) -> &Residents {
        self.0.as_ref().expect("initialized by hold")
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Residents {
        self.0.as_mut().expect("initialized by hold")
    }
}

pub(crate) fn hold() -> Held {
    let mut g = RESIDENTS.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(HashMap::new);
    Held(g)
}

/// Whether a buffer with these flags may be kept resident: not when the
/// application's host memory backs it.
pub(crate) fn eligible(flags: u64) -> bool {
    flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR) == 0
}

fn app_of(root: usize) -> Option<AppCopy> {
    state::with(|s| s.buffers.get(&root).map(|b| b.app))
}

/// Reads `size` bytes of the application's buffer `mem` with a blocking
/// read on `queue`.
pub(crate) fn read_app(
    queue: cl_command_queue,
    mem: usize,
    size: usize,
) -> Result<Vec<u8>, String> {
    let read = target()
        .clEnqueueReadBuffer
        .ok_or("clEnqueueReadBuffer is missing")?;
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` holds `size` bytes; blocking.
    let r = unsafe {
        read(
            queue,
            mem as _,
            CL_TRUE,
            0,
            size,
            bytes.as_mut_ptr() as *mut c_void,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    if r != CL_SUCCESS {
        return Err(format!(
            "reading a buffer argument from the application's device failed ({r})"
        ));
    }
    Ok(bytes)
}

/// Writes `bytes` at `offset` into the application's buffer `mem` with a
/// blocking write on `queue`; the driver's code.
pub(crate) fn write_app(
    queue: cl_command_queue,
    mem: usize,
    offset: usize,
    bytes: &[u8],
) -> cl_int {
    let Some(write) = target().clEnqueueWriteBuffer else {
        return opencl_sys::CL_INVALID_OPERATION;
    };
    // SAFETY: `bytes` is borrowed for the call, which blocks.
    unsafe {
        write(
            queue,
            mem as _,
            CL_TRUE,
            offset,
            bytes.len(),
            bytes.as_ptr() as *const c_void,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    }
}

/// Makes the application's copy of the buffers `roots` current before an
/// operation on `queue` reads them through the driver: for each stale one,
/// the bytes split launches wrote are gathered from clpart's devices and
/// written (non-blocking writes ordered before the operation on `queue`).
/// The caller holds [`Inside`] and the resident copies.
pub(crate) fn sync_held(
    held: &mut Residents,
    queue: cl_command_queue,
    roots: &[usize],
) -> Result<(), cl_int> {
    for &root in roots {
        if app_of(root) != Some(AppCopy::Stale) {
            continue;
        }
        let Some(r) = held.get_mut(&root) else {
            let why = "clpart's copy of a buffer the application reads is missing".to_string();
            report::sync_failed(&why);
            return Err(CL_OUT_OF_RESOURCES);
        };
        let started = std::time::Instant::now();
        // what only other MPI ranks hold comes to rank 0 first
        if let Err(why) = crate::ranks::gather(root, r) {
            report::sync_failed(&format!(
                "a buffer the application reads cannot be gathered from the other ranks: {why}"
            ));
            return Err(CL_OUT_OF_RESOURCES);
        }
        let before = r.buf.bytes_gathered();
        let host = match r.buf.read_all() {
            Ok(h) => h,
            Err(e) => {
                report::sync_failed(&format!(
                    "a buffer the application reads cannot be gathered from clpart's devices: {e}"
                ));
                return Err(CL_OUT_OF_RESOURCES);
            }
        };
        let n = host.as_bytes().len() as u64;
        // Non-blocking, ordered on the application's queue: a command of
        // the application's ahead of it may wait for a user event it sets
        // later ([`events`]).
        let code = events::write_ordered(queue, root, 0, host.as_bytes().to_vec());
        if code != CL_SUCCESS {
            report::sync_failed(&format!(
                "writing clpart's results into the application's buffer failed ({code})"
            ));
            return Err(code);
        }
        r.host_whole = true;
        let gathered = r.buf.bytes_gathered() - before;
        report::synced_out(n, gathered, started.elapsed());
        report::log_sync_out(root, n, gathered);
        state::with(|s| s.set_app(root, AppCopy::Current));
    }
    Ok(())
}

/// [`sync_held`] for the buffers or sub-buffers `mems`, from an entry
/// point: nothing to do (and no lock taken) unless one is stale.
pub(crate) fn sync_out(queue: cl_command_queue, mems: &[usize]) -> Result<(), cl_int> {
    if Inside::active() {
        return Ok(());
    }
    let roots = state::with(|s| stale_roots(s, mems));
    sync_roots(queue, &roots)
}

/// The roots of `mems` whose application copy is stale.
fn stale_roots(s: &state::State, mems: &[usize]) -> Vec<usize> {
    roots_where(s, mems, AppCopy::Stale)
}

/// The roots of `mems` whose application copy is `app`.
fn roots_where(s: &state::State, mems: &[usize], app: AppCopy) -> Vec<usize> {
    mems.iter()
        .filter_map(|&m| s.root(m))
        .filter(|r| s.buffers.get(r).is_some_and(|b| b.app == app))
        .collect()
}

/// The bytes of the roots of `mems` whose application copy is `app`,
/// each once.
fn bytes_where(s: &state::State, mems: &[usize], app: AppCopy) -> u64 {
    let mut roots = roots_where(s, mems, app);
    roots.sort_unstable();
    roots.dedup();
    roots
        .iter()
        .filter_map(|r| s.buffers.get(r))
        .map(|b| b.size as u64)
        .sum()
}

/// The bytes a sync of `mems` would move: their stale roots, each once.
pub(crate) fn stale_bytes(s: &state::State, mems: &[usize]) -> u64 {
    bytes_where(s, mems, AppCopy::Stale)
}

/// Whether a launch over `mems` that cannot split moves less on clpart's
/// devices, where the buffers clpart holds newer are, than on the
/// application's: the bytes a pass-through would sync out (the stale
/// roots) against those a launch on clpart's devices would read in (the
/// roots the application holds newer, or of which clpart holds no copy).
/// A kernel whose own small outputs stay on clpart's devices then does not
/// pull the arrays the application wrote back to them at every launch.
pub(crate) fn unsplit_where_kept(s: &state::State, mems: &[usize]) -> bool {
    let stale = bytes_where(s, mems, AppCopy::Stale);
    stale > 0 && stale > bytes_where(s, mems, AppCopy::Newer)
}

/// [`sync_held`] for stale roots (nothing to do, and no lock taken, for
/// none).
fn sync_roots(queue: cl_command_queue, roots: &[usize]) -> Result<(), cl_int> {
    if roots.is_empty() {
        return Ok(());
    }
    let _inside = Inside::enter();
    let mut held = hold();
    sync_held(&mut held, queue, roots)
}

/// Before the application writes `size` bytes at `offset` of `mem`: unless
/// the write covers the whole buffer, the rest of a stale buffer is made
/// current first.
pub(crate) fn before_write(
    queue: cl_command_queue,
    mem: usize,
    offset: usize,
    size: usize,
) -> Result<(), cl_int> {
    if Inside::active() {
        return Ok(());
    }
    let whole = state::with(|s| {
        s.buffers
            .get(&mem)
            .is_some_and(|b| b.parent.is_none() && offset == 0 && size >= b.size)
    });
    if whole {
        return Ok(());
    }
    sync_out(queue, &[mem])
}

/// The application wrote `mems` (buffers or sub-buffers) through the
/// driver: its copy is newer than clpart's.
pub(crate) fn written(mems: &[usize]) {
    if Inside::active() {
        return;
    }
    state::with(|s| {
        for &m in mems {
            s.set_app(m, AppCopy::Newer);
        }
    });
}

/// A map of `mem` the driver made at `ptr`: one for writing makes the
/// application's copy newer now and again at its unmap.
pub(crate) fn mapped(mem: usize, ptr: usize, flags: cl_map_flags) {
    if Inside::active() || flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) == 0 {
        return;
    }
    state::with(|s| {
        if let Some(b) = s.buffers.get_mut(&mem) {
            b.write_maps.push(ptr);
        }
        s.set_app(mem, AppCopy::Newer);
    });
}

/// An unmap of `ptr` from `mem` the driver accepted.
pub(crate) fn unmapped(mem: usize, ptr: usize) {
    if Inside::active() {
        return;
    }
    state::with(|s| {
        let Some(b) = s.buffers.get_mut(&mem) else {
            return;
        };
        if let Some(i) = b.write_maps.iter().position(|&p| p == ptr) {
            b.write_maps.swap_remove(i);
            s.set_app(mem, AppCopy::Newer);
        }
    });
}

/// A launch of `kernel` the layer passes to the driver: every buffer among
/// its arguments is made current first; returns those the kernel may
/// write (not made `CL_MEM_READ_ONLY`, and passed through some argument
/// the kernel's analysis did not prove read-only), for [`written`] once
/// the driver accepted the launch.
pub(crate) fn before_launch(queue: cl_command_queue, kernel: usize) -> Result<Vec<usize>, cl_int> {
    if Inside::active() {
        return Ok(Vec::new());
    }
    let (stale, writable) = state::with(|s| {
        let Some(k) = s.kernels.get(&kernel) else {
            return (Vec::new(), Vec::new());
        };
        let read_only = |i: usize| {
            k.read_only
                .as_ref()
                .is_some_and(|r| r.contains(&(i as u32)))
        };
        let mut handles: Vec<usize> = Vec::new();
        let mut writable: Vec<usize> = Vec::new();
        for (i, arg) in k.args.iter().enumerate() {
            let Some(h) = arg.as_ref().and_then(RawArg::handle) else {
                continue;
            };
            let Some(b) = s.buffers.get(&h) else { continue };
            handles.push(h);
            // a buffer the kernel may write through some argument
            if b.flags & CL_MEM_READ_ONLY == 0 && !read_only(i) && !writable.contains(&h) {
                writable.push(h);
            }
        }
        (stale_roots(s, &handles), writable)
    });
    sync_roots(queue, &stale)?;
    Ok(writable)
}

/// Buffer records that went (the application's last reference): their
/// resident copies are dropped.
pub(crate) fn gone(recs: Vec<(usize, BufferRec)>) {
    let handles: Vec<usize> = recs
        .iter()
        .filter(|(_, r)| r.resident)
        .map(|(h, _)| *h)
        .collect();
    if handles.is_empty() {
        return;
    }
    // clpart's own buffers are released through the loader: straight to
    // the driver.
    let _inside = Inside::enter();
    let dropped: Vec<Resident> = {
        let mut held = hold();
        for &h in &handles {
            crate::ranks::forget(h);
        }
        handles.iter().filter_map(|h| held.remove(h)).collect()
    };
    drop(dropped);
}

/// Makes `held[mem]` hold the application's buffer `mem` (`size` bytes) as
/// elements `elem`, reading it from the application's device on `queue`
/// when clpart holds no copy or the application's is newer; returns the
/// bytes moved between the application's device and the host. The caller
/// holds [`Inside`].
pub(crate) fn bring_in(
    held: &mut Residents,
    queue: cl_command_queue,
    mem: usize,
    size: usize,
    elem: &ElemType,
) -> Result<u64, String> {
    let mut moved = 0;
    if let Some(r) = held.get_mut(&mem).filter(|r| r.buf.elem() != elem) {
        // Another kernel saw the buffer with other elements.
        let old_es = r.buf.elem().size.max(1) as usize;
        if size.is_multiple_of(old_es) && size.is_multiple_of(elem.size.max(1) as usize) {
            // Both cover it all: clpart's copy is seen with the new
            // elements in place (what the devices hold whole of them stays
            // there; only elements split between holders are gathered).
            // (the other ranks' copies count elements of the old type)
            crate::ranks::gather(mem, r).map_err(|why| {
                format!("a buffer argument cannot be gathered from the other ranks: {why}")
            })?;
            crate::ranks::forget(mem);
            let before = r.buf.bytes_gathered();
            r.buf.retype(elem.clone()).map_err(|e| {
                format!(
                    "clpart's copy of a buffer argument cannot be seen with other elements: {e}"
                )
            })?;
            report::gathered(r.buf.bytes_gathered() - before);
        } else {
            // The application's copy is made current and clpart's starts
            // afresh.
            if app_of(mem) == Some(AppCopy::Stale) {
                sync_held(held, queue, &[mem]).map_err(|code| {
                    format!("the buffer's results could not be written back for a launch that sees it with other elements ({code})")
                })?;
                moved += size as u64;
            }
            held.remove(&mem);
            crate::ranks::forget(mem);
            state::with(|s| {
                if let Some(b) = s.buffers.get_mut(&mem) {
                    b.resident = false;
                    b.app = AppCopy::Newer;
                }
            });
        }
    }
    let app = app_of(mem).unwrap_or_default();
    match held.get_mut(&mem) {
        Some(_) if app != AppCopy::Newer => return Ok(moved),
        Some(r) => {
            let started = std::time::Instant::now();
            let bytes = read_app(queue, mem, size)?;
            moved += size as u64;
            let (written, changed) = refresh(r, &bytes).map_err(|e| {
                format!("clpart's copy of a buffer argument cannot be updated: {e}")
            })?;
            crate::ranks::host_wrote(mem, written.as_deref());
            report::synced_in(size as u64, started.elapsed());
            report::log_sync_in(mem, size as u64, changed);
        }
        None => {
            let started = std::time::Instant::now();
            let bytes = read_app(queue, mem, size)?;
            moved += size as u64;
            held.insert(mem, Resident::new(elem.clone(), bytes));
            report::synced_in(size as u64, started.elapsed());
            report::log_sync_in(mem, size as u64, vec![(0, size as u64)]);
        }
    }
    state::with(|s| {
        if let Some(b) = s.buffers.get_mut(&mem) {
            b.resident = true;
            b.app = AppCopy::Current;
        }
    });
    Ok(moved)
}

/// What [`refresh`] wrote into clpart's copy: element runs `[lo, hi)`, or
/// `None` for every element.
type Written = Option<Vec<(usize, usize)>>;

/// Puts the application's contents `bytes` into `r`: only the elements
/// that differ from a complete host copy (what clpart's devices hold of the
/// others stays valid), else all of them. Returns the elements written
/// and, for the launch log, the byte ranges that differed (every byte when
/// the host copy was not complete; nothing when the log is not kept).
fn refresh(r: &mut Resident, bytes: &[u8]) -> launcher::Result<(Written, Vec<(u64, u64)>)> {
    let es = r.buf.elem().size.max(1) as usize;
    let n = r.buf.len() as usize * es;
    let bytes = &bytes[..n.min(bytes.len())];
    if !r.host_whole {
        r.buf.write(0, bytes)?;
        r.host_whole = true;
        return Ok((None, vec![(0, bytes.len() as u64)]));
    }
    // Complete: nothing is gathered.
    let old = r.buf.read_all()?.as_bytes();
    let changed: Vec<(u64, u64)> = if report::logging() {
        runs_of(old, bytes, es, 0, usize::MAX)
            .into_iter()
            .map(|(lo, hi)| ((lo * es) as u64, (hi * es) as u64))
            .collect()
    } else {
        Vec::new()
    };
    let runs = differing(old, bytes, es);
    for &(lo, hi) in &runs {
        r.buf.write(lo as u64, &bytes[lo * es..hi * es])?;
    }
    Ok((Some(runs), changed))
}

/// Most element runs [`refresh`] writes one by one; beyond, one write of
/// their hull.
const MAX_RUNS: usize = 256;
/// Unchanged elements between two changed ones that are written with them
/// rather than split into two writes.
const GAP_ELEMS: usize = 16;

/// The element runs `[lo, hi)` where `new` differs from `old` (elements of
/// `es` bytes), nearby runs joined; one hull past [`MAX_RUNS`].
fn differing(old: &[u8], new: &[u8], es: usize) -> Vec<(usize, usize)> {
    runs_of(old, new, es, GAP_ELEMS, MAX_RUNS)
}

/// The element runs where `new` differs from `old`, runs at most `gap`
/// unchanged elements apart joined; one hull past `max_runs`.
fn runs_of(old: &[u8], new: &[u8], es: usize, gap: usize, max_runs: usize) -> Vec<(usize, usize)> {
    let n = old.len().min(new.len()) / es;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        if old[i * es..(i + 1) * es] == new[i * es..(i + 1) * es] {
            continue;
        }
        match runs.last_mut() {
            Some(last) if i - last.1 <= gap => last.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    if runs.len() > max_runs {
        let (lo, hi) = (runs[0].0, runs[runs.len() - 1].1);
        return vec![(lo, hi)];
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A launch passed to the driver leaves the buffers its analysis
    /// proved read-only as they were (a buffer also passed through a
    /// written argument is written).
    #[test]
    fn a_launch_at_home_writes_only_what_the_kernel_may_write() {
        let arg = |h: usize| {
            Some(RawArg {
                size: 8,
                value: Some(h.to_ne_bytes().to_vec()),
                svm: false,
            })
        };
        state::with(|s| {
            for h in [0x9100, 0x9101, 0x9102] {
                s.add_buffer(h, 64, 0);
            }
            s.add_kernel(0x9001, 0x9000, "k".into());
            let k = s.kernels.get_mut(&0x9001).unwrap();
            k.args = vec![arg(0x9100), arg(0x9101), arg(0x9102), arg(0x9102)];
        });
        let writes = before_launch(std::ptr::null_mut(), 0x9001).unwrap();
        assert_eq!(writes, [0x9100, 0x9101, 0x9102]);
        state::with(|s| {
            s.kernels.get_mut(&0x9001).unwrap().read_only = Some(Arc::from([0u32, 2]));
        });
        let writes = before_launch(std::ptr::null_mut(), 0x9001).unwrap();
        assert_eq!(writes, [0x9101, 0x9102]);
    }

    #[test]
    fn differing_elements_come_as_joined_runs() {
        let old = vec![0u8; 4 * 100];
        let mut new = old.clone();
        assert!(differing(&old, &new, 4).is_empty());
        new[4 * 3] = 1;
        new[4 * 10 + 2] = 1;
        new[4 * 60] = 1;
        new[4 * 99 + 3] = 1;
        assert_eq!(differing(&old, &new, 4), [(3, 11), (60, 61), (99, 100)]);
    }

    /// The launch log's `changed`: exactly the elements that differ.
    #[test]
    fn exact_runs_join_only_adjacent_elements() {
        let old = vec![0u8; 4 * 100];
        let mut new = old.clone();
        for i in [3, 4, 10, 99] {
            new[4 * i + 1] = 1;
        }
        assert_eq!(
            runs_of(&old, &new, 4, 0, usize::MAX),
            [(3, 5), (10, 11), (99, 100)]
        );
    }

    #[test]
    fn too_many_runs_become_one_hull() {
        let old = vec![0u8; 100 * (MAX_RUNS + 1)];
        let mut new = old.clone();
        for r in 0..=MAX_RUNS {
            new[r * 100 + 1] = 7;
        }
        assert_eq!(differing(&old, &new, 1), [(1, MAX_RUNS * 100 + 2)]);
    }

    #[test]
    fn only_buffers_without_host_memory_are_resident() {
        assert!(eligible(
            opencl_sys::CL_MEM_READ_WRITE | opencl_sys::CL_MEM_COPY_HOST_PTR
        ));
        assert!(!eligible(CL_MEM_USE_HOST_PTR));
        assert!(!eligible(
            opencl_sys::CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR
        ));
    }
}
