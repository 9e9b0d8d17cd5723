//! Buffers that live across launches ([`DeviceBuffer`]) and the set that
//! hands them out by id ([`BufferSet`]).
//!
//! A [`DeviceBuffer`] owns one host copy of an array and, per device that
//! ran a slice over it, a device allocation holding some of its elements.
//! [`crate::Coherence`] records, per holder, which elements are valid
//! there. A launch ([`launch_resident`]) sends each device only the part of
//! its ranges it lacks and leaves what each device wrote valid on that
//! device only; a host read ([`DeviceBuffer::read`]) gathers only what the
//! host lacks. The host-array form, [`crate::launch`], is a launch over
//! buffers made for the occasion: written before, read after.

use std::collections::BTreeMap;
use std::sync::Arc;

use opencl3::memory::Buffer;

use crate::args::KernelArgs;
use crate::buffer::HostBuffer;
use crate::coherence::{Coherence, Holder};
use crate::elem::ElemType;
use crate::error::{LaunchError, Result};
use crate::exec::{self, Finisher, HostRegion};
use crate::launch::{LaunchOptions, RunReport};
use crate::ndrange::NdRange;
use crate::plan::{Plan, GUARD_SINK};
use crate::runs::{Rect, Runs, COST_MODEL};
use crate::runtime::DeviceCtx;

/// One device's allocation for a buffer: elements `[base, base + extent)`
/// of the array, then the guard's sink. Dropped, its memory goes back to
/// the device's pool (`pool.rs`).
pub(crate) struct DevAlloc {
    pub(crate) ctx: Arc<DeviceCtx>,
    pub(crate) base: i64,
    pub(crate) extent: u64,
    /// Bytes of `mem`.
    pub(crate) bytes: usize,
    /// Taken out only by `Drop`.
    pub(crate) mem: std::mem::ManuallyDrop<Buffer<u8>>,
}

impl Drop for DevAlloc {
    fn drop(&mut self) {
        // SAFETY: `mem` is not used after this.
        let mem = unsafe { std::mem::ManuallyDrop::take(&mut self.mem) };
        exec::give(&self.ctx, self.bytes, mem);
    }
}

impl DevAlloc {
    /// Whether the allocation holds elements `[lo, hi]`.
    pub(crate) fn covers(&self, lo: i64, hi: i64) -> bool {
        lo >= self.base && hi < self.base + self.extent as i64
    }
}

/// What a read to the host copied, per source device (the elements), and
/// moved (the bytes and commands).
pub(crate) type HostReads = (Vec<(usize, Runs)>, Vec<(usize, u64, u64)>);

/// Where a buffer's elements are valid and the device allocations that
/// hold them (the part of a [`DeviceBuffer`] besides its host copy).
pub(crate) struct Residency {
    pub(crate) coh: Coherence,
    pub(crate) allocs: BTreeMap<usize, DevAlloc>,
    /// Every element comes back to the host right after the launch (a
    /// buffer of the host-array form): a split launch then reads what the
    /// devices write in the same command stream as the kernel, through
    /// staging, instead of in a second round afterwards.
    pub(crate) gather_after: bool,
}

impl Residency {
    /// Whether the buffer is as [`DeviceBuffer::new`] made it, for a
    /// launch that gathers it afterwards (`gather_after`: the host-array
    /// form's buffers): valid on the host only, with no device allocation.
    /// A split launch does the same to every fresh buffer of one schedule,
    /// which `launch/split.rs` keeps and replays (`Kept`).
    pub(crate) fn is_fresh(&self) -> bool {
        self.gather_after && self.allocs.is_empty() && self.coh.is_host_only()
    }

    /// Copies what the host copy `host` (elements of `es` bytes) lacks of
    /// `want` from the devices holding it; returns the bytes moved and the
    /// commands per source device. Elements whose last writer failed are an error.
    pub(crate) fn gather(
        &mut self,
        host: &mut [u8],
        es: u64,
        want: &Runs,
    ) -> Result<Vec<(usize, u64, u64)>> {
        if want.is_empty() {
            return Ok(Vec::new());
        }
        let (plan, moved) = self.read_into(host, es, want)?;
        for (_, runs) in &plan {
            self.coh.copied(Holder::Host, runs);
        }
        Ok(moved)
    }

    /// [`Residency::gather`] of every element of `host`.
    pub(crate) fn gather_all(&mut self, host: &mut HostBuffer) -> Result<Vec<(usize, u64, u64)>> {
        let (es, all) = whole(host);
        self.gather(host.as_bytes_mut(), es, &all)
    }

    /// [`Residency::read_into`] of every element of `host`, unrecorded.
    pub(crate) fn read_all_into(&self, host: &mut HostBuffer) -> Result<()> {
        let (es, all) = whole(host);
        self.read_into(host.as_bytes_mut(), es, &all).map(|_| ())
    }

    /// What [`Residency::gather`] copies, into `host` (a copy of the host
    /// copy, say), without recording it: the plan and bytes per device.
    pub(crate) fn read_into(&self, host: &mut [u8], es: u64, want: &Runs) -> Result<HostReads> {
        let mut fin = Finisher::new();
        // SAFETY: `host` is borrowed for this call, and `fin` finishes
        // (or, dropped on an error, waits for) the queues before it returns.
        let out = unsafe { self.enqueue_read(HostRegion::of(host), es, want, &mut fin)? };
        fin.finish()?;
        Ok(out)
    }

    /// The copies of [`Residency::read_into`], enqueued: the queues they
    /// use are added to `fin`.
    ///
    /// # Safety
    /// `region` must stay valid, and nothing else may access it, until
    /// `fin` has finished or been dropped.
    pub(crate) unsafe fn enqueue_read(
        &self,
        region: HostRegion,
        es: u64,
        want: &Runs,
        fin: &mut Finisher,
    ) -> Result<HostReads> {
        let plan = self
            .coh
            .plan_host(want)
            .map_err(|lost| lost_error(&lost.0))?;
        if plan.is_empty() {
            return Ok((plan, Vec::new()));
        }
        let mut moved = Vec::new();
        let mut copied = Vec::new();
        for (dev, runs) in &plan {
            let Some(a) = self.allocs.get(dev) else {
                return Err(LaunchError::Buffer {
                    message: format!("device {dev} holds elements of the buffer but no allocation"),
                });
            };
            fin.add(&a.ctx);
            let mut n = 0;
            let fill = self
                .coh
                .valid(Holder::Device(*dev))
                .intersect(&Runs::interval(a.base, a.base + a.extent as i64 - 1));
            let rects = runs.transfers(&fill, es, COST_MODEL);
            copied.push((*dev, Rect::union_of(&rects)));
            let n_commands = rects.len() as u64;
            for rect in rects {
                // SAFETY: the region stays valid until `fin` finishes (the
                // caller's contract); bounds are checked on both sides.
                exec::release(unsafe {
                    exec::read_rect(&a.ctx, &a.mem, a.base, region, &rect, es)?
                });
                n += rect.n_elems() * es;
            }
            moved.push((*dev, n, n_commands));
        }
        Ok((copied, moved))
    }
}

/// A buffer that lives across launches: one host copy and the elements
/// each device holds, with which copy of each element is valid.
pub struct DeviceBuffer {
    pub(crate) host: HostBuffer,
    pub(crate) res: Residency,
    /// Bytes copied device → host by reads, since creation.
    gathered: u64,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("elem", self.host.elem())
            .field("len", &self.host.len())
            .field("devices", &self.res.allocs.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl DeviceBuffer {
    /// A buffer holding `host`'s elements, valid on the host only.
    pub fn new(host: HostBuffer) -> DeviceBuffer {
        let coh = Coherence::host_valid(host.len());
        DeviceBuffer {
            host,
            res: Residency {
                coh,
                allocs: BTreeMap::new(),
                gather_after: false,
            },
            gathered: 0,
        }
    }

    /// A buffer of `n` zero elements.
    pub fn zeros(elem: ElemType, n: u64) -> Result<DeviceBuffer> {
        let host = HostBuffer::zeros(elem, n).map_err(|message| LaunchError::Buffer { message })?;
        Ok(DeviceBuffer::new(host))
    }

    /// The element type.
    pub fn elem(&self) -> &ElemType {
        self.host.elem()
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.host.len()
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
    }

    /// Bytes copied device → host by reads so far.
    pub fn bytes_gathered(&self) -> u64 {
        self.gathered
    }

    /// Bytes this buffer holds in device allocations (all devices).
    pub fn device_bytes(&self) -> u64 {
        let es = self.host.elem().size.max(1) as u64;
        self.res.allocs.values().map(|a| a.extent * es).sum()
    }

    /// The devices holding a valid copy of some element.
    pub fn devices(&self) -> Vec<usize> {
        self.res.coh.devices()
    }

    fn elem_range(&self, offset: u64, n: u64) -> Result<Runs> {
        let len = self.len();
        if offset.checked_add(n).is_none_or(|end| end > len) {
            return Err(LaunchError::Buffer {
                message: format!(
                    "elements [{offset}, {offset}+{n}) are outside the buffer of {len} elements"
                ),
            });
        }
        Ok(if n == 0 {
            Runs::new()
        } else {
            Runs::interval(offset as i64, (offset + n - 1) as i64)
        })
    }

    /// Writes `bytes` (whole elements) from element `offset` on: the host
    /// copy holds them and every device copy of those elements is stale.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let es = self.host.elem().size.max(1) as u64;
        if !(bytes.len() as u64).is_multiple_of(es) {
            return Err(LaunchError::Buffer {
                message: format!(
                    "{} bytes are not a whole number of {es}-byte elements",
                    bytes.len()
                ),
            });
        }
        let n = bytes.len() as u64 / es;
        let r = self.elem_range(offset, n)?;
        let at = (offset * es) as usize;
        self.host.as_bytes_mut()[at..at + bytes.len()].copy_from_slice(bytes);
        self.res.coh.written(Holder::Host, &r);
        Ok(())
    }

    /// Makes the host copy hold elements `[offset, offset + n)`, copying
    /// from the devices only what it lacks. An element whose last writer
    /// failed is an error ([`LaunchError::Lost`]), never stale bytes.
    pub fn sync(&mut self, offset: u64, n: u64) -> Result<()> {
        let want = self.elem_range(offset, n)?;
        self.gather(&want)
    }

    /// Elements `[offset, offset + n)` as bytes (see [`DeviceBuffer::sync`]).
    pub fn read(&mut self, offset: u64, n: u64) -> Result<&[u8]> {
        self.sync(offset, n)?;
        let es = self.host.elem().size.max(1) as u64;
        Ok(&self.host.as_bytes()[(offset * es) as usize..((offset + n) * es) as usize])
    }

    /// The whole buffer, gathered on the host.
    pub fn read_all(&mut self) -> Result<&HostBuffer> {
        self.sync(0, self.len())?;
        Ok(&self.host)
    }

    /// The host copy, gathered, and the buffer's device memory released.
    pub fn into_host(mut self) -> Result<HostBuffer> {
        self.sync(0, self.len())?;
        self.res.allocs.clear();
        let empty = HostBuffer::from_bytes(self.host.elem().clone(), Vec::new());
        Ok(std::mem::replace(&mut self.host, empty))
    }

    /// Makes the buffer one of `elem` elements, its bytes unchanged (a
    /// kernel that sees a `float` buffer as `float4`, after one that saw it
    /// as `float`): each device allocation is kept over the new elements
    /// it holds bytes of (copied on the device to a new allocation where
    /// its first byte is inside a new element or the guard's sink of the
    /// new elements does not fit after them) and keeps those it holds
    /// whole and valid; the host gathers only the bytes that would then be
    /// valid nowhere (elements split between holders). An error when the
    /// buffer's bytes are not a whole number of the new elements, or when
    /// a byte to gather is lost.
    pub fn retype(&mut self, elem: ElemType) -> Result<()> {
        let from = self.host.elem().size.max(1) as u64;
        let to = elem.size.max(1) as u64;
        let n_bytes = self.host.as_bytes().len() as u64;
        if !n_bytes.is_multiple_of(to) {
            return Err(LaunchError::Buffer {
                message: format!(
                    "a buffer of {n_bytes} bytes is not a whole number of {} elements ({to} bytes)",
                    elem.name
                ),
            });
        }
        if from != to {
            // Per kept allocation: its new first element and extent, and
            // where its first byte lands past the new first element's.
            let mut room: BTreeMap<usize, Runs> = BTreeMap::new();
            let mut placed: BTreeMap<usize, (i64, u64, u64)> = BTreeMap::new();
            for (&dev, a) in &self.res.allocs {
                let start = a.base * from as i64;
                let end = (a.base + a.extent as i64) * from as i64;
                let (base, last) = (start.div_euclid(to as i64), end / to as i64 - 1);
                if start >= 0 && last >= base {
                    room.insert(dev, Runs::interval(base, last));
                    let shift = (start - base * to as i64) as u64;
                    placed.insert(dev, (base, (last - base + 1) as u64, shift));
                }
            }
            let needs = self.res.coh.retype_needs(from, to, &room);
            self.gather(&needs)?;
            self.res.coh = self.res.coh.retyped(from, to, &room);
            self.res.allocs.retain(|dev, _| placed.contains_key(dev));
            for (dev, a) in self.res.allocs.iter_mut() {
                let (base, extent, shift) = placed[dev];
                let bytes = ((extent + GUARD_SINK) * to) as usize;
                if shift == 0 && a.bytes >= bytes {
                    (a.base, a.extent) = (base, extent);
                    continue;
                }
                // The first byte is inside a new element, or the guard's
                // sink of the larger elements does not fit after them: a
                // new allocation, the bytes copied on the device (the
                // first element, partly held, is not valid there).
                let mem = exec::take(&a.ctx, bytes)?;
                let held = (extent * to - shift) as usize;
                exec::release(exec::copy(&a.ctx, &a.mem, 0, &mem, shift as usize, held)?);
                *a = DevAlloc {
                    ctx: a.ctx.clone(),
                    base,
                    extent,
                    bytes,
                    mem: std::mem::ManuallyDrop::new(mem),
                };
            }
        }
        let empty = HostBuffer::from_bytes(elem.clone(), Vec::new());
        let bytes = std::mem::replace(&mut self.host, empty).into_bytes();
        self.host = HostBuffer::from_bytes(elem, bytes);
        Ok(())
    }

    /// Copies what the host lacks of `want` from the devices holding it.
    pub(crate) fn gather(&mut self, want: &Runs) -> Result<()> {
        let es = self.host.elem().size.max(1) as u64;
        let moved = self.res.gather(self.host.as_bytes_mut(), es, want)?;
        self.gathered += moved.iter().map(|m| m.1).sum::<u64>();
        Ok(())
    }
}

/// Gathers every element of each buffer's host copy from the devices
/// ([`Residency::gather_all`] of each), with one wait for all of them;
/// each buffer's allocations are then released (to the devices' pools).
/// Returns the bytes moved and commands per source device, or the first
/// error; every buffer is handled whatever another's result.
pub(crate) fn gather_all_and_free<'a>(
    bufs: impl Iterator<Item = &'a mut DeviceBuffer>,
) -> Result<Vec<(usize, u64, u64)>> {
    let mut bufs: Vec<&mut DeviceBuffer> = bufs.collect();
    let mut first_err = None;
    let mut moved = Vec::new();
    let mut plans: Vec<Vec<(usize, Runs)>> = Vec::with_capacity(bufs.len());
    {
        let mut fin = Finisher::new();
        for b in bufs.iter_mut() {
            let (es, all) = whole(&b.host);
            // SAFETY: the host copies are borrowed for this call, and `fin`
            // finishes (or, dropped, waits for) the queues before the
            // borrow ends.
            match unsafe {
                b.res
                    .enqueue_read(HostRegion::of(b.host.as_bytes_mut()), es, &all, &mut fin)
            } {
                Ok((plan, m)) => {
                    plans.push(plan);
                    moved.extend(m);
                }
                Err(e) => {
                    plans.push(Vec::new());
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Err(e) = fin.finish() {
            // nothing read can be trusted: record nothing as copied
            plans.iter_mut().for_each(Vec::clear);
            first_err.get_or_insert(e);
        }
    }
    for (b, plan) in bufs.iter_mut().zip(plans) {
        for (_, runs) in &plan {
            b.res.coh.copied(Holder::Host, runs);
        }
        b.res.allocs.clear();
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(moved),
    }
}

/// A host buffer's element size and all its elements.
fn whole(host: &HostBuffer) -> (u64, Runs) {
    (
        host.elem().size.max(1) as u64,
        Runs::interval(0, host.len() as i64 - 1),
    )
}

/// The error for reading elements whose last writer failed.
pub(crate) fn lost_error(lost: &Runs) -> LaunchError {
    let (lower, upper) = lost.hull().unwrap_or((0, 0));
    LaunchError::Lost { lower, upper }
}

/// A handle to a buffer of a [`BufferSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

/// Resident buffers by id, for hosts that name buffers by handle (the C
/// API, run files).
#[derive(Debug, Default)]
pub struct BufferSet {
    items: Vec<Option<DeviceBuffer>>,
}

impl BufferSet {
    /// An empty set.
    pub fn new() -> BufferSet {
        BufferSet::default()
    }

    /// Adds a buffer; returns its id.
    pub fn add(&mut self, buf: DeviceBuffer) -> BufferId {
        self.items.push(Some(buf));
        BufferId((self.items.len() - 1) as u32)
    }

    /// The buffer `id`.
    pub fn get(&self, id: BufferId) -> Option<&DeviceBuffer> {
        self.items.get(id.0 as usize)?.as_ref()
    }

    /// The buffer `id`, mutable.
    pub fn get_mut(&mut self, id: BufferId) -> Option<&mut DeviceBuffer> {
        self.items.get_mut(id.0 as usize)?.as_mut()
    }

    /// Removes buffer `id` (its device memory is released).
    pub fn remove(&mut self, id: BufferId) -> Option<DeviceBuffer> {
        self.items.get_mut(id.0 as usize)?.take()
    }

    /// Puts `buf` back as buffer `id` (one [`BufferSet::remove`] took out,
    /// or one [`BufferSet::add`] gave): a host that keeps its buffers
    /// elsewhere lends them to the set for one call. Returns the buffer
    /// that held the id, if any; an id the set never gave is an error.
    pub fn put(&mut self, id: BufferId, buf: DeviceBuffer) -> Result<Option<DeviceBuffer>> {
        let slot = self
            .items
            .get_mut(id.0 as usize)
            .ok_or_else(|| LaunchError::Buffer {
                message: format!("buffer {} was never added to the set", id.0),
            })?;
        Ok(slot.replace(buf))
    }

    /// Runs `f` with `args` whose buffer arguments at `bindings` are the
    /// bound buffers' host copies (their lengths right, their contents as
    /// the host holds them), put back afterwards: what a schedule needs of
    /// a launch over the set, without a copy of any buffer.
    pub fn with_shapes<T>(
        &mut self,
        args: &mut KernelArgs,
        bindings: &[(u32, BufferId)],
        f: impl FnOnce(&KernelArgs) -> T,
    ) -> Result<T> {
        let mut taken: Vec<(u32, BufferId, DeviceBuffer)> = Vec::with_capacity(bindings.len());
        for &(a, id) in bindings {
            match self.items.get_mut(id.0 as usize).and_then(Option::take) {
                Some(b) => taken.push((a, id, b)),
                None => {
                    for (_, id, b) in taken {
                        self.items[id.0 as usize] = Some(b);
                    }
                    return Err(LaunchError::Buffer {
                        message: format!(
                            "argument {a} is bound to buffer {} which does not exist",
                            id.0
                        ),
                    });
                }
            }
        }
        let out = {
            let mut refs: Vec<(u32, &mut DeviceBuffer)> =
                taken.iter_mut().map(|(a, _, b)| (*a, b)).collect();
            with_host_copies(args, &mut refs, |args, _| Ok(f(args)))
        };
        for (_, id, b) in taken {
            self.items[id.0 as usize] = Some(b);
        }
        out
    }

    /// Launches `plan`'s kernel with the buffer arguments `bindings`
    /// (`(argument index, buffer)`) taken from this set; see
    /// [`launch_resident`]. A buffer bound to two arguments is an error.
    pub fn launch(
        &mut self,
        plan: &mut Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        bindings: &[(u32, BufferId)],
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> Result<RunReport> {
        for (i, &(a, id)) in bindings.iter().enumerate() {
            if self.get(id).is_none() {
                return Err(LaunchError::Buffer {
                    message: format!(
                        "argument {a} is bound to buffer {} which does not exist",
                        id.0
                    ),
                });
            }
            if bindings[..i].iter().any(|&(_, other)| other == id) {
                return Err(LaunchError::Buffer {
                    message: format!(
                        "buffer {} is bound to two arguments of kernel '{}' (clpart cannot split aliased buffers)",
                        id.0,
                        plan.kernel.name
                    ),
                });
            }
        }
        let mut taken: Vec<(u32, BufferId, DeviceBuffer)> = bindings
            .iter()
            .map(|&(a, id)| {
                (
                    a,
                    id,
                    self.items[id.0 as usize].take().expect("checked above"),
                )
            })
            .collect();
        let result = {
            let mut refs: Vec<(u32, &mut DeviceBuffer)> =
                taken.iter_mut().map(|(a, _, b)| (*a, b)).collect();
            launch_resident(plan, nd, args, &mut refs, shares, options)
        };
        for (_, id, b) in taken {
            self.items[id.0 as usize] = Some(b);
        }
        result
    }
}

/// Swaps each bound buffer's host copy into `args` for the duration of `f`
/// and back afterwards, whatever `f` returns.
pub(crate) fn with_host_copies<T>(
    args: &mut KernelArgs,
    bufs: &mut [(u32, &mut DeviceBuffer)],
    f: impl FnOnce(&mut KernelArgs, &mut [(u32, &mut DeviceBuffer)]) -> Result<T>,
) -> Result<T> {
    for (i, b) in bufs.iter_mut() {
        let slot = args.buffer_at_mut(*i).ok_or_else(|| LaunchError::Buffer {
            message: format!("argument {i} is not a buffer argument"),
        })?;
        if slot.elem().size != b.host.elem().size {
            return Err(LaunchError::Buffer {
                message: format!(
                    "argument {i} has {}-byte elements, the buffer bound to it {}-byte ones",
                    slot.elem().size,
                    b.host.elem().size
                ),
            });
        }
    }
    for (i, b) in bufs.iter_mut() {
        std::mem::swap(args.buffer_at_mut(*i).expect("checked above"), &mut b.host);
    }
    let out = f(args, bufs);
    for (i, b) in bufs.iter_mut() {
        std::mem::swap(args.buffer_at_mut(*i).expect("checked above"), &mut b.host);
    }
    out
}

/// Runs `plan`'s kernel over `nd` split by `shares`, with the buffer
/// arguments `bufs` (`(argument index, buffer)`) left resident: each device
/// gets only what its slice reads and it lacks, and keeps what it wrote.
/// The values in `args` at the bound indices are placeholders (any buffer of
/// the argument's element size); the other arguments are used as given.
pub fn launch_resident(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    bufs: &mut [(u32, &mut DeviceBuffer)],
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<RunReport> {
    crate::launch::launch_over(plan, nd, args, bufs, shares, options)
}
