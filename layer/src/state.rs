//! What the layer remembers of the application's objects, keyed by handle:
//! program sources and build options, kernels with their arguments, buffers
//! with their sizes and flags. Each record keeps the application's
//! reference count (creation 1, retain +1, release -1) and goes at zero, so
//! a handle value the driver reuses starts a fresh record.
//!
//! Objects clpart creates for itself (while [`Inside`] is set) are not
//! recorded.
//!
//! A buffer's record also says which copy of its contents is current
//! ([`AppCopy`]): the application's, on its device, or the one clpart keeps
//! resident across split launches ([`crate::resident`]). A sub-buffer's
//! record names its parent, which it keeps (as the driver does): every
//! question about contents is asked of the parent ([`State::root`]).

use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard};

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Set while clpart itself calls OpenCL on this thread: the layer's entry
/// points then go straight to the driver.
pub(crate) struct Inside {
    was: bool,
}

impl Inside {
    pub(crate) fn enter() -> Inside {
        Inside {
            was: INSIDE.with(|c| c.replace(true)),
        }
    }

    pub(crate) fn active() -> bool {
        INSIDE.with(|c| c.get())
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|c| c.set(self.was));
    }
}

/// A program made with `clCreateProgramWithSource`.
pub(crate) struct ProgramRec {
    /// The source as the application gave it.
    given: Arc<str>,
    /// The source clpart analyzes and splits: the given one with its
    /// `#include`d files written in as they were at the last successful
    /// `clBuildProgram` ([`coarsen::with_includes_written_in`]).
    pub(crate) source: Arc<str>,
    /// The options of the last successful `clBuildProgram`, split at white
    /// space.
    pub(crate) options: Arc<[String]>,
    /// Why its kernels never split (its included files could not be read
    /// as the driver read them).
    pub(crate) refused: Option<Arc<str>>,
    refs: u32,
}

/// One `clSetKernelArg` as the application made it.
#[derive(Clone, Debug)]
pub(crate) struct RawArg {
    pub(crate) size: usize,
    /// The bytes at `arg_value` (`None` for a NULL pointer: `__local`
    /// arguments, NULL buffers).
    pub(crate) value: Option<Vec<u8>>,
    /// Set with `clSetKernelArgSVMPointer`: the launch passes through.
    pub(crate) svm: bool,
}

impl RawArg {
    /// The object handle a pointer-sized value holds (a buffer, an image,
    /// a sampler: the records say which); `None` for a NULL pointer or a
    /// value of another size.
    pub(crate) fn handle(&self) -> Option<usize> {
        let v = self.value.as_deref()?;
        Some(usize::from_ne_bytes(v.try_into().ok()?))
    }
}

/// A kernel made with `clCreateKernel` or `clCreateKernelsInProgram`.
#[derive(Clone)]
pub(crate) struct KernelRec {
    pub(crate) name: String,
    /// The program's source and build options, when it was made from
    /// source (kept here: the application may release the program first).
    pub(crate) program: Option<(Arc<str>, Arc<[String]>)>,
    pub(crate) args: Vec<Option<RawArg>>,
    /// `clSetKernelExecInfo` was called (SVM the kernel may reach without
    /// an argument): its launches pass through.
    pub(crate) exec_info: bool,
    /// The kernel stays unsplit for any scalar values at this NDRange (for
    /// good, or for a number of launches): its launches of that size pass
    /// through at once.
    pub(crate) unsplit: Option<Unsplit>,
    /// The argument indices the kernel's analysis proved it only reads
    /// (known once an analysis gave a plan): a launch at home leaves
    /// those buffers as they were.
    pub(crate) read_only: Option<Arc<[u32]>>,
    /// Why the kernel never splits, known from its program alone.
    pub(crate) refused: Option<Arc<str>>,
    refs: u32,
}

impl KernelRec {
    /// The buffers its arguments are set to (each as often as it is set).
    pub(crate) fn buffers(&self) -> Vec<usize> {
        self.args
            .iter()
            .flatten()
            .filter_map(RawArg::handle)
            .collect()
    }
}

/// A launch size at which a kernel's verdict is unsplit whatever its
/// scalar arguments, as the application gives it (the verdict depends on
/// nothing else the application can change: source, name and build
/// options are the kernel's own).
#[derive(Clone, Debug)]
pub(crate) struct Unsplit {
    pub(crate) global: Vec<usize>,
    /// The local size given, `None` for NULL.
    pub(crate) local: Option<Vec<usize>>,
    pub(crate) name: Arc<str>,
    pub(crate) reason: Arc<str>,
    /// Launches left before the layer decides again (`None`: for good).
    pub(crate) left: Option<u32>,
    /// `left` when the stretch began.
    pub(crate) length: u32,
    /// `Some(n)`: the launches pass through while an analysis is made,
    /// until the worker has finished other than `n` jobs
    /// ([`crate::analyses::finished_jobs`]).
    pub(crate) until_finished: Option<u64>,
    /// The launches pass through until clpart holds more of the kernel's
    /// buffers newer than the application does
    /// ([`crate::resident::unsplit_where_kept`]): such a launch runs
    /// unsplit on clpart's devices, where they are.
    pub(crate) until_stale: bool,
}

impl Unsplit {
    /// Whether a launch of `global` and `local` sizes (the application's
    /// `work_dim` entries, `local` NULL when not given) is of this size.
    ///
    /// # Safety
    /// `global` points to `work_dim` entries, `local` too unless NULL.
    pub(crate) unsafe fn matches(
        &self,
        work_dim: u32,
        global: *const usize,
        local: *const usize,
    ) -> bool {
        let dims = work_dim as usize;
        if global.is_null() || dims != self.global.len() {
            return false;
        }
        // SAFETY: the caller's contract.
        let same = |p: *const usize, v: &[usize]| (0..dims).all(|d| unsafe { *p.add(d) } == v[d]);
        same(global, &self.global)
            && match (&self.local, local.is_null()) {
                (None, true) => true,
                (Some(l), false) => same(local, l),
                _ => false,
            }
    }
}

/// Which copy of a buffer's contents is current: the application's (on
/// its device, through the driver) or clpart's resident one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AppCopy {
    /// The application's copy holds what clpart's resident copy (if there
    /// is one) lacks: it wrote the buffer through the driver since (a write,
    /// a fill, a copy, a map for writing, a kernel the layer did not run),
    /// or clpart holds no copy.
    #[default]
    Newer,
    /// Both copies hold the same contents.
    Current,
    /// clpart's resident copy holds results of split launches the
    /// application's copy lacks.
    Stale,
}

/// A buffer made with `clCreateBuffer` (or `clCreateSubBuffer`).
#[derive(Clone, Debug)]
pub(crate) struct BufferRec {
    /// The record's number in the process, from 0 in the order the
    /// application made its buffers, sub-buffers and images: a handle the
    /// driver reuses gets a new one (the report's launch log names buffers
    /// by it).
    pub(crate) id: u64,
    pub(crate) size: usize,
    pub(crate) flags: u64,
    /// The buffer this one is a sub-buffer of.
    pub(crate) parent: Option<usize>,
    pub(crate) app: AppCopy,
    /// clpart keeps a resident copy of the buffer ([`crate::resident`]).
    pub(crate) resident: bool,
    /// Pointers of maps for writing not yet unmapped.
    pub(crate) write_maps: Vec<usize>,
    /// The record is an image's (any `clCreateImage*`): never a split
    /// launch's buffer argument; with a `parent`, the buffer whose storage
    /// it shares (`CL_MEM_OBJECT_IMAGE1D_BUFFER`, or a 2-D image from a
    /// buffer), which every operation on the image reads or writes.
    pub(crate) image: bool,
    /// An image shares (or shared) this buffer's storage: for the rest of
    /// the buffer's life, kernels that take it run unsplit on the
    /// application's device.
    pub(crate) pinned: bool,
    refs: u32,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) programs: HashMap<usize, ProgramRec>,
    pub(crate) kernels: HashMap<usize, KernelRec>,
    pub(crate) buffers: HashMap<usize, BufferRec>,
    /// Buffer records made so far (the next [`BufferRec::id`]).
    n_buffers_made: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `f` on the state, under its lock (never held across an OpenCL call).
pub(crate) fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard: MutexGuard<'_, Option<State>> = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(State::default))
}

/// Adds `delta` to a record's count; removes it at zero. Unknown handles
/// are left alone.
fn adjust<T>(
    map: &mut HashMap<usize, T>,
    key: usize,
    delta: i32,
    refs: impl Fn(&mut T) -> &mut u32,
) {
    if let Some(rec) = map.get_mut(&key) {
        let r = refs(rec);
        *r = r.saturating_add_signed(delta);
        if *r == 0 {
            map.remove(&key);
        }
    }
}

impl State {
    pub(crate) fn add_program(&mut self, handle: usize, source: String) {
        let source: Arc<str> = source.into();
        self.programs.insert(
            handle,
            ProgramRec {
                given: source.clone(),
                source,
                options: Arc::from(Vec::new()),
                refused: None,
                refs: 1,
            },
        );
    }

    /// The source a program was made with, as the application gave it,
    /// and the options of its last build.
    pub(crate) fn given_source(&self, handle: usize) -> Option<(Arc<str>, Arc<[String]>)> {
        self.programs
            .get(&handle)
            .map(|p| (p.given.clone(), p.options.clone()))
    }

    /// The program's source as at its build
    /// ([`coarsen::with_includes_written_in`]), or why it could not be read.
    pub(crate) fn set_built_source(&mut self, handle: usize, built: Result<String, String>) {
        if let Some(p) = self.programs.get_mut(&handle) {
            match built {
                Ok(text) => {
                    p.source = text.into();
                    p.refused = None;
                }
                Err(why) => {
                    p.source = p.given.clone();
                    p.refused = Some(
                        format!("its #include files could not be read as the driver read them at clBuildProgram: {why}").into(),
                    );
                }
            }
        }
    }

    pub(crate) fn set_build_options(&mut self, handle: usize, options: &str) {
        if let Some(p) = self.programs.get_mut(&handle) {
            let v: Vec<String> = options.split_whitespace().map(str::to_string).collect();
            p.options = v.into();
        }
    }

    pub(crate) fn retain_program(&mut self, handle: usize, delta: i32) {
        adjust(&mut self.programs, handle, delta, |p| &mut p.refs);
    }

    pub(crate) fn add_kernel(&mut self, handle: usize, program: usize, name: String) {
        let refused = self.programs.get(&program).and_then(|p| p.refused.clone());
        let program = self
            .programs
            .get(&program)
            .map(|p| (p.source.clone(), p.options.clone()));
        self.kernels.insert(
            handle,
            KernelRec {
                name,
                program,
                args: Vec::new(),
                exec_info: false,
                unsplit: None,
                read_only: None,
                refused,
                refs: 1,
            },
        );
    }

    /// A `clCloneKernel` copy: same program, name and arguments.
    pub(crate) fn clone_kernel(&mut self, handle: usize, source: usize) {
        if let Some(k) = self.kernels.get(&source) {
            let copy = KernelRec {
                refs: 1,
                ..k.clone()
            };
            self.kernels.insert(handle, copy);
        }
    }

    pub(crate) fn set_exec_info(&mut self, handle: usize) {
        if let Some(k) = self.kernels.get_mut(&handle) {
            k.exec_info = true;
        }
    }

    pub(crate) fn retain_kernel(&mut self, handle: usize, delta: i32) {
        adjust(&mut self.kernels, handle, delta, |k| &mut k.refs);
    }

    pub(crate) fn set_arg(&mut self, handle: usize, index: u32, arg: RawArg) {
        if let Some(k) = self.kernels.get_mut(&handle) {
            let i = index as usize;
            if k.args.len() <= i {
                k.args.resize(i + 1, None);
            }
            k.args[i] = Some(arg);
        }
    }

    /// Records a buffer; returns the record a reused handle replaces.
    pub(crate) fn add_buffer(
        &mut self,
        handle: usize,
        size: usize,
        flags: u64,
    ) -> Option<BufferRec> {
        let id = self.new_buffer_id();
        self.buffers.insert(
            handle,
            BufferRec {
                id,
                size,
                flags,
                parent: None,
                app: AppCopy::Newer,
                resident: false,
                write_maps: Vec::new(),
                image: false,
                pinned: false,
                refs: 1,
            },
        )
    }

    /// Records an image; one made over a buffer the layer saw made (`over`)
    /// names that buffer's root as its parent, holds a reference to it (as
    /// the driver does) and pins it.
    pub(crate) fn add_image(
        &mut self,
        handle: usize,
        over: Option<usize>,
        flags: u64,
    ) -> Option<BufferRec> {
        let parent = over.and_then(|b| self.root(b));
        let size = match parent {
            Some(root) => {
                self.retain_buffer(root, 1);
                let b = self.buffers.get_mut(&root).expect("a root is recorded");
                b.pinned = true;
                b.size
            }
            None => 0,
        };
        let id = self.new_buffer_id();
        self.buffers.insert(
            handle,
            BufferRec {
                id,
                size,
                flags,
                parent,
                app: AppCopy::Newer,
                resident: false,
                write_maps: Vec::new(),
                image: true,
                pinned: false,
                refs: 1,
            },
        )
    }

    /// Records a sub-buffer of `parent` (a buffer the layer saw made; else
    /// nothing is recorded), which holds a reference to its root.
    pub(crate) fn add_sub_buffer(
        &mut self,
        handle: usize,
        parent: usize,
        size: usize,
        flags: u64,
    ) -> Option<BufferRec> {
        let root = self.root(parent)?;
        self.retain_buffer(root, 1);
        let id = self.new_buffer_id();
        self.buffers.insert(
            handle,
            BufferRec {
                id,
                size,
                flags,
                parent: Some(root),
                app: AppCopy::Newer,
                resident: false,
                write_maps: Vec::new(),
                image: false,
                pinned: false,
                refs: 1,
            },
        )
    }

    fn new_buffer_id(&mut self) -> u64 {
        self.n_buffers_made += 1;
        self.n_buffers_made - 1
    }

    /// The buffer whose record holds `handle`'s contents: its parent for a
    /// sub-buffer, itself for a buffer; `None` for a handle the layer did
    /// not see made.
    pub(crate) fn root(&self, handle: usize) -> Option<usize> {
        let b = self.buffers.get(&handle)?;
        Some(b.parent.unwrap_or(handle))
    }

    /// Adds `delta` to a buffer's count; returns the records that went (the
    /// buffer's, and its parent's when a sub-buffer held the last
    /// reference).
    pub(crate) fn retain_buffer(&mut self, handle: usize, delta: i32) -> Vec<(usize, BufferRec)> {
        let mut gone = Vec::new();
        let Some(b) = self.buffers.get_mut(&handle) else {
            return gone;
        };
        b.refs = b.refs.saturating_add_signed(delta);
        if b.refs == 0 {
            let rec = self.buffers.remove(&handle).expect("present");
            if let Some(parent) = rec.parent {
                gone.extend(self.retain_buffer(parent, -1));
            }
            gone.push((handle, rec));
        }
        gone
    }

    /// Sets the state of the root of `handle`'s contents (nothing for a
    /// handle the layer did not see made).
    pub(crate) fn set_app(&mut self, handle: usize, app: AppCopy) {
        if let Some(root) = self.root(handle) {
            if let Some(b) = self.buffers.get_mut(&root) {
                b.app = app;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_follow_the_applications_reference_counts() {
        let mut s = State::default();
        s.add_buffer(0x10, 64, 0);
        s.retain_buffer(0x10, 1);
        s.retain_buffer(0x10, -1);
        assert!(s.buffers.contains_key(&0x10));
        s.retain_buffer(0x10, -1);
        assert!(!s.buffers.contains_key(&0x10));
        // A release of a handle the layer never saw changes nothing.
        s.retain_buffer(0x20, -1);
        assert!(s.buffers.is_empty());
    }

    /// The launch log names buffers by id: a handle the driver reuses
    /// after a release is another buffer.
    #[test]
    fn a_reused_handle_gets_a_new_buffer_id() {
        let mut s = State::default();
        s.add_buffer(0x10, 64, 0);
        s.add_sub_buffer(0x11, 0x10, 16, 0);
        s.add_image(0x12, None, 0);
        let ids: Vec<u64> = [0x10, 0x11, 0x12].iter().map(|h| s.buffers[h].id).collect();
        assert_eq!(ids, [0, 1, 2]);
        s.retain_buffer(0x12, -1);
        s.add_buffer(0x12, 64, 0);
        assert_eq!(s.buffers[&0x12].id, 3);
    }

    #[test]
    fn a_sub_buffer_keeps_its_parent_and_names_it_as_root() {
        let mut s = State::default();
        s.add_buffer(0x10, 64, 0);
        s.add_sub_buffer(0x11, 0x10, 16, 0);
        // A sub-buffer of a sub-buffer is one of the root.
        s.add_sub_buffer(0x12, 0x11, 8, 0);
        assert_eq!(s.root(0x12), Some(0x10));
        assert_eq!(s.root(0x10), Some(0x10));
        assert_eq!(s.root(0x99), None);
        s.set_app(0x12, AppCopy::Stale);
        assert_eq!(s.buffers[&0x10].app, AppCopy::Stale);
        // The application's last reference to the parent goes first: the
        // record stays while sub-buffers hold it.
        assert!(s.retain_buffer(0x10, -1).is_empty());
        assert!(s.retain_buffer(0x11, -1).iter().map(|g| g.0).eq([0x11]));
        let gone: Vec<usize> = s.retain_buffer(0x12, -1).iter().map(|g| g.0).collect();
        assert_eq!(gone, [0x10, 0x12]);
        assert!(s.buffers.is_empty());
        // Nothing is recorded for a sub-buffer of an unknown buffer.
        assert!(s.add_sub_buffer(0x13, 0x77, 8, 0).is_none());
        assert!(s.buffers.is_empty());
    }

    #[test]
    fn an_image_over_a_buffer_pins_it_and_keeps_it() {
        let mut s = State::default();
        s.add_buffer(0x10, 64, 0);
        s.add_sub_buffer(0x11, 0x10, 16, 0);
        // An image over a sub-buffer shares the root's storage.
        s.add_image(0x20, Some(0x11), 0);
        // An image of its own has no parent.
        s.add_image(0x21, None, 0);
        assert_eq!(s.root(0x20), Some(0x10));
        assert_eq!(s.root(0x21), Some(0x21));
        assert!(s.buffers[&0x10].pinned && s.buffers[&0x20].image);
        s.set_app(0x20, AppCopy::Stale);
        assert_eq!(s.buffers[&0x10].app, AppCopy::Stale);
        assert!(s.retain_buffer(0x10, -1).is_empty());
        assert!(s.retain_buffer(0x11, -1).iter().map(|g| g.0).eq([0x11]));
        let gone: Vec<usize> = s.retain_buffer(0x20, -1).iter().map(|g| g.0).collect();
        assert_eq!(gone, [0x10, 0x20]);
    }

    #[test]
    fn a_kernel_keeps_its_programs_source_after_the_program_goes() {
        let mut s = State::default();
        s.add_program(0x1, "__kernel void k(int n) {}".into());
        s.set_build_options(0x1, "-DN=4   -cl-mad-enable");
        s.add_kernel(0x2, 0x1, "k".into());
        s.retain_program(0x1, -1);
        assert!(s.programs.is_empty());
        let k = &s.kernels[&0x2];
        let (source, options) = k.program.as_ref().unwrap();
        assert!(source.contains("void k"));
        assert_eq!(&options[..], ["-DN=4", "-cl-mad-enable"]);
    }

    #[test]
    fn arguments_are_recorded_by_index_and_a_reused_handle_starts_afresh() {
        let mut s = State::default();
        s.add_kernel(0x3, 0x99, "k".into());
        assert!(s.kernels[&0x3].program.is_none());
        s.set_arg(
            0x3,
            2,
            RawArg {
                size: 4,
                value: Some(vec![1, 0, 0, 0]),
                svm: false,
            },
        );
        let args = &s.kernels[&0x3].args;
        assert_eq!(args.len(), 3);
        assert!(args[0].is_none() && args[2].as_ref().unwrap().size == 4);
        s.add_kernel(0x3, 0x99, "other".into());
        assert!(s.kernels[&0x3].args.is_empty());
    }

    #[test]
    fn a_clone_carries_the_arguments_and_exec_info_marks_the_kernel() {
        let mut s = State::default();
        s.add_kernel(0x4, 0x99, "k".into());
        s.set_arg(
            0x4,
            0,
            RawArg {
                size: 0,
                value: None,
                svm: true,
            },
        );
        s.clone_kernel(0x5, 0x4);
        assert!(s.kernels[&0x5].args[0].as_ref().unwrap().svm);
        s.retain_kernel(0x4, -1);
        assert!(s.kernels.contains_key(&0x5));
        s.set_exec_info(0x5);
        assert!(s.kernels[&0x5].exec_info);
    }

    #[test]
    fn an_unsplit_size_matches_only_the_same_sizes() {
        let u = Unsplit {
            global: vec![1024, 8],
            local: Some(vec![64, 1]),
            name: "k".into(),
            reason: "atomics".into(),
            left: None,
            length: 0,
            until_finished: None,
            until_stale: false,
        };
        let (g, l, other) = ([1024usize, 8], [64usize, 1], [32usize, 1]);
        // SAFETY: arrays of `work_dim` entries.
        unsafe {
            assert!(u.matches(2, g.as_ptr(), l.as_ptr()));
            assert!(!u.matches(2, g.as_ptr(), other.as_ptr()));
            assert!(!u.matches(2, g.as_ptr(), std::ptr::null()));
            assert!(!u.matches(1, g.as_ptr(), l.as_ptr()));
            assert!(!u.matches(2, std::ptr::null(), l.as_ptr()));
        }
        let v = Unsplit { local: None, ..u };
        // SAFETY: as above.
        unsafe {
            assert!(v.matches(2, g.as_ptr(), std::ptr::null()));
            assert!(!v.matches(2, g.as_ptr(), l.as_ptr()));
        }
    }

    #[test]
    fn inside_is_restored_when_dropped() {
        assert!(!Inside::active());
        {
            let _a = Inside::enter();
            let _b = Inside::enter();
            assert!(Inside::active());
        }
        assert!(!Inside::active());
    }
}
