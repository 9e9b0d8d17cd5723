//! What the layer remembers of the application's objects, keyed by handle:
//! program sources and build options, kernels with their arguments, buffers
//! with their sizes and flags. Each record keeps the application's
//! reference count (creation 1, retain +1, release -1) and goes at zero, so
//! a handle value the driver reuses starts a fresh record.
//!
//! Objects clpart creates for itself (while [`Inside`] is set) are not
//! recorded.

use std::cell::Cell;
use std::collections::HashMap;
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
    pub(crate) source: Arc<str>,
    /// The options of the last successful `clBuildProgram`, split at white
    /// space.
    pub(crate) options: Arc<[String]>,
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
    refs: u32,
}

/// A buffer made with `clCreateBuffer`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferRec {
    pub(crate) size: usize,
    pub(crate) flags: u64,
    refs: u32,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) programs: HashMap<usize, ProgramRec>,
    pub(crate) kernels: HashMap<usize, KernelRec>,
    pub(crate) buffers: HashMap<usize, BufferRec>,
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
        self.programs.insert(
            handle,
            ProgramRec {
                source: source.into(),
                options: Arc::from(Vec::new()),
                refs: 1,
            },
        );
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

    pub(crate) fn add_buffer(&mut self, handle: usize, size: usize, flags: u64) {
        self.buffers.insert(
            handle,
            BufferRec {
                size,
                flags,
                refs: 1,
            },
        );
    }

    pub(crate) fn retain_buffer(&mut self, handle: usize, delta: i32) {
        adjust(&mut self.buffers, handle, delta, |b| &mut b.refs);
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
