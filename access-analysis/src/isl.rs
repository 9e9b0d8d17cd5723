//! A thin owner of an isl context: parsing from text, printing to text, and the
//! mapping of isl failures (operation limit, errors) to [`IslFail`].
//!
//! isl objects are built by printing isl's textual syntax and parsing it. The
//! context is configured to neither print nor abort on errors
//! (`ISL_ON_ERROR_CONTINUE`); every failing operation comes back as an `Err`.

use isl_rs::{Context, Error, LibISLError, Map, Options, Set};
use std::ffi::{c_char, c_void, CStr};

extern "C" {
    fn isl_map_to_str(map: usize) -> *mut c_char;
    fn isl_set_to_str(set: usize) -> *mut c_char;
    fn free(ptr: *mut c_void);
}

/// Why an isl computation did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IslFail {
    /// `isl_ctx_set_max_operations` was exceeded.
    Limit(u64),
    /// Any other isl error (a bug in the generated text, most likely).
    Error(String),
    /// The wall-clock budget ([`crate::AnalysisOptions::time_budget_ms`]) ran out.
    Deadline(u64),
}

pub(crate) type IslResult<T> = Result<T, IslFail>;

/// Owns the `isl_ctx`. Every isl object created through it must be dropped
/// before it (all objects are local to the functions using them).
pub(crate) struct Isl {
    /// Declared before `ctx`: dropped (joined) before the context is freed.
    watchdog: Option<crate::budget::Watchdog>,
    ctx: Context,
    max_ops: u64,
    budget_ms: u64,
}

/// ISL_ON_ERROR_CONTINUE from isl/options.h.
const ON_ERROR_CONTINUE: i32 = 1;

impl Isl {
    pub fn new(max_ops: u64) -> Isl {
        let ctx = Context::alloc();
        // Failing to set the option only means isl may print warnings.
        let _ = Options::set_on_error(&ctx, ON_ERROR_CONTINUE);
        ctx.set_max_operations(max_ops);
        Isl { watchdog: None, ctx, max_ops, budget_ms: 0 }
    }

    /// Aborts every isl operation of this context from `deadline` on.
    pub fn arm(&mut self, deadline: std::time::Instant, budget_ms: u64) {
        self.budget_ms = budget_ms;
        self.watchdog = Some(crate::budget::Watchdog::arm(&self.ctx, deadline));
    }

    /// Whether the time budget ran out.
    pub fn expired(&self) -> bool {
        self.watchdog.as_ref().is_some_and(|w| w.expired())
    }

    /// Starts a fresh operation budget (one per array) and clears stale errors.
    pub fn reset(&self) {
        self.ctx.reset_operations();
        self.ctx.reset_error();
    }

    /// Converts an isl-rs error into an [`IslFail`], clearing the context error.
    pub fn fail(&self, e: LibISLError) -> IslFail {
        let text = e.to_string();
        let stale = self.ctx.last_error();
        self.ctx.reset_error();
        if self.expired() {
            IslFail::Deadline(self.budget_ms)
        } else if text.starts_with("[Quota]") || stale == Error::Quota {
            IslFail::Limit(self.max_ops)
        } else {
            IslFail::Error(text)
        }
    }

    pub fn map(&self, text: &str) -> IslResult<Map> {
        Map::read_from_str(&self.ctx, text).map_err(|e| self.annotate(self.fail(e), text))
    }

    pub fn set(&self, text: &str) -> IslResult<Set> {
        Set::read_from_str(&self.ctx, text).map_err(|e| self.annotate(self.fail(e), text))
    }

    fn annotate(&self, f: IslFail, text: &str) -> IslFail {
        match f {
            IslFail::Error(m) => IslFail::Error(format!("{m} in '{text}'")),
            other => other,
        }
    }

    /// Runs `f` without the operation limit (printing must not fail half-way).
    fn unlimited<T>(&self, f: impl FnOnce() -> T) -> T {
        self.ctx.set_max_operations(0);
        let r = f();
        // An expired watchdog re-asserts its limit of 1 shortly anyway.
        self.ctx.set_max_operations(if self.expired() { 1 } else { self.max_ops });
        r
    }

    fn print_fail(&self, what: &str) -> IslFail {
        if self.expired() {
            IslFail::Deadline(self.budget_ms)
        } else {
            IslFail::Error(format!("isl could not print a {what}"))
        }
    }

    pub fn map_str(&self, m: &Map) -> IslResult<String> {
        // SAFETY: `m.ptr` is a live isl_map owned by `m`; isl_map_to_str only
        // reads it and returns a malloc'ed string (or NULL), which we free.
        self.unlimited(|| unsafe { owned_str(isl_map_to_str(m.ptr)) })
            .ok_or_else(|| self.print_fail("map"))
    }

    pub fn set_str(&self, s: &Set) -> IslResult<String> {
        // SAFETY: as in `map_str`.
        self.unlimited(|| unsafe { owned_str(isl_set_to_str(s.ptr)) })
            .ok_or_else(|| self.print_fail("set"))
    }
}

/// Copies and frees a C string returned by isl.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string allocated with malloc.
unsafe fn owned_str(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let s = CStr::from_ptr(p).to_string_lossy().into_owned();
    free(p as *mut c_void);
    Some(s)
}

/// Wraps an isl-rs call result into an [`IslResult`].
pub(crate) trait IslOk<T> {
    fn ok_in(self, isl: &Isl) -> IslResult<T>;
}

impl<T> IslOk<T> for Result<T, LibISLError> {
    fn ok_in(self, isl: &Isl) -> IslResult<T> {
        self.map_err(|e| isl.fail(e))
    }
}
