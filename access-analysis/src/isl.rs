//! The one isl wrapper of clpart, shared by the access analysis and the
//! partitioner: it owns an isl context with its operation limit
//! (`max_operations`, 0 = no limit, in every stage) and its wall-clock
//! watchdog, maps isl failures (operation limit, deadline, errors) to
//! [`IslFail`], and is the only place that turns isl text into isl objects or
//! isl objects into text (and into [`ranges_format::PwExpr`] values).
//!
//! The access analysis builds its isl objects through isl's API (module
//! `build`), each given with the text that says the same object; what only
//! the text can say is read from the text. The context is configured to
//! neither print nor abort on errors (`ISL_ON_ERROR_CONTINUE`); every failing
//! operation comes back as an `Err`.
//!
//! A parse cache reads each text once per context and copies the object on
//! later reads; an object built or printed here is kept under its text too,
//! so reading that text back copies it instead of parsing it. The
//! partitioner goes on in the context the access analysis worked in
//! (`analyze_kernel_in`), so the relations it takes as text are found there.
//! [`Isl::within`] runs one step under a deadline of its own beside the
//! kernel's (a second watchdog); [`Isl::order`] gives the integer orders the
//! partitioner's intervals and runs apply.
//!
//! isl itself is built from source by isl-rs; `.cargo/config.toml` points
//! isl's configure at `scripts/isl-config.site`, which selects imath with its
//! small-integer optimization (the same exact arithmetic, faster analysis).

use isl_rs::{Context, Error, LibISLError, Map, Options, PwAff, Set};

mod build;
pub(crate) use build::Piece;
pub use build::{Affine, Constraint};
use std::ffi::{c_char, c_void, CStr};

extern "C" {
    fn isl_map_to_str(map: usize) -> *mut c_char;
    fn isl_set_to_str(set: usize) -> *mut c_char;
    fn isl_pw_aff_to_str(pa: usize) -> *mut c_char;
    fn isl_map_get_ctx(map: usize) -> usize;
    fn isl_set_get_ctx(set: usize) -> usize;
    fn free(ptr: *mut c_void);
}

/// Why an isl computation did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IslFail {
    /// `isl_ctx_set_max_operations` was exceeded.
    Limit(u64),
    /// Any other isl error (a bug in the generated text, most likely).
    Error(String),
    /// The wall-clock budget ([`crate::AnalysisOptions::time_budget_ms`]) ran out.
    Deadline(u64),
}

pub type IslResult<T> = Result<T, IslFail>;

/// Owns the `isl_ctx`. Every isl object created through it must be dropped
/// before it (all objects are local to the functions using them).
pub struct Isl {
    /// Declared before `ctx`: dropped (joined) before the context is freed.
    watchdog: Option<crate::budget::Watchdog>,
    /// The watchdog of a shorter deadline of one step ([`Isl::within`]).
    /// Declared before `ctx`, as `watchdog`.
    scoped: std::cell::RefCell<Option<crate::budget::Watchdog>>,
    /// Parsed texts, so that the same relation or set is read once per
    /// context (isl's reader simplifies as it reads, and the stages read
    /// the same access relations, domains and contexts many times).
    /// Declared before `ctx`: its objects are freed before the context.
    parsed: std::cell::RefCell<Parsed>,
    /// Every isl object created through it must be dropped before it.
    ctx: Context,
    max_ops: u64,
    budget_ms: u64,
}

/// The parse cache of an [`Isl`]: only successful parses are kept.
#[derive(Default)]
struct Parsed {
    maps: std::collections::HashMap<String, Map>,
    sets: std::collections::HashMap<String, Set>,
}

/// Most texts of each kind an [`Isl`] keeps parsed.
const MAX_PARSED: usize = 4096;

/// ISL_ON_ERROR_CONTINUE from isl/options.h.
const ON_ERROR_CONTINUE: i32 = 1;

impl Isl {
    /// A context with the operation limit `max_ops` (0: no limit).
    pub fn new(max_ops: u64) -> Isl {
        let ctx = Context::alloc();
        // Failing to set the option only means isl may print warnings.
        let _ = Options::set_on_error(&ctx, ON_ERROR_CONTINUE);
        ctx.set_max_operations(max_ops);
        Isl {
            watchdog: None,
            scoped: Default::default(),
            parsed: Default::default(),
            ctx,
            max_ops,
            budget_ms: 0,
        }
    }

    /// [`Isl::new`], armed with `deadline` when there is one (`budget_ms` is
    /// what messages name).
    pub fn with_deadline(
        max_ops: u64,
        deadline: Option<std::time::Instant>,
        budget_ms: u64,
    ) -> Isl {
        let mut isl = Isl::new(max_ops);
        if let Some(d) = deadline {
            isl.arm(d, budget_ms);
        }
        isl
    }

    /// The isl context, for isl-rs calls.
    pub fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// The operation limit (0: none).
    pub fn max_ops(&self) -> u64 {
        self.max_ops
    }

    /// Aborts every isl operation of this context from `deadline` on.
    pub fn arm(&mut self, deadline: std::time::Instant, budget_ms: u64) {
        self.budget_ms = budget_ms;
        self.watchdog = Some(crate::budget::Watchdog::arm(&self.ctx, deadline));
    }

    /// Whether the time budget ran out (or the deadline of the step
    /// [`Isl::within`] runs passed).
    pub fn expired(&self) -> bool {
        self.watchdog.as_ref().is_some_and(|w| w.expired())
            || self.scoped.borrow().as_ref().is_some_and(|w| w.expired())
    }

    /// Runs `f`, one step of the work, with this context stopped at
    /// `deadline` too (a limit of the step's own inside the kernel's
    /// budget), and says whether that deadline passed. After it the context
    /// works on under the kernel's budget alone (with a fresh operation
    /// count), unless that too ran out. Steps do not nest: a step inside a
    /// step runs under the outer step's deadline only.
    pub fn within<T>(&self, deadline: std::time::Instant, f: impl FnOnce() -> T) -> (T, bool) {
        if self.scoped.borrow().is_some() {
            let r = f();
            return (r, false);
        }
        *self.scoped.borrow_mut() = Some(crate::budget::Watchdog::arm(&self.ctx, deadline));
        let r = f();
        let dog = self.scoped.borrow_mut().take();
        let passed = dog.as_ref().is_some_and(|w| w.expired());
        // joins the watchdog's thread: it stores no limit after this
        drop(dog);
        self.restore_limit();
        self.reset();
        (r, passed)
    }

    /// Puts back the context's operation limit after a step that changed it
    /// (1 where the budget ran out: an expired watchdog keeps it there).
    fn restore_limit(&self) {
        self.ctx
            .set_max_operations(if self.expired() { 1 } else { self.max_ops });
    }

    /// Starts a fresh operation budget (one per array) and clears stale errors.
    pub fn reset(&self) {
        self.ctx.reset_operations();
        self.ctx.reset_error();
    }

    /// Runs `f`, a simplification the caller can do without (a gist that
    /// only makes a text shorter), under an operation limit of its own,
    /// `max_ops` (at most the context's): `None` when it ran out or failed,
    /// and the caller keeps the unsimplified object. Starts a fresh
    /// operation count before and after; an expired deadline stays in force.
    pub fn optional<T>(
        &self,
        max_ops: u64,
        f: impl FnOnce() -> Result<T, LibISLError>,
    ) -> Option<T> {
        if self.expired() {
            return None;
        }
        let limit = if self.max_ops == 0 {
            max_ops
        } else {
            max_ops.min(self.max_ops)
        };
        self.reset();
        self.ctx.set_max_operations(limit);
        let r = f();
        self.restore_limit();
        self.reset();
        r.ok()
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

    /// Parses an isl map (each text once per context: later calls copy).
    pub fn map(&self, text: &str) -> IslResult<Map> {
        if let Some(m) = self.parsed.borrow().maps.get(text) {
            return m.copy().map_err(|e| self.fail(e));
        }
        let m =
            Map::read_from_str(&self.ctx, text).map_err(|e| self.annotate(self.fail(e), text))?;
        let mut parsed = self.parsed.borrow_mut();
        if parsed.maps.len() < MAX_PARSED {
            parsed
                .maps
                .insert(text.to_string(), m.copy().map_err(|e| self.fail(e))?);
        }
        Ok(m)
    }

    /// Parses an isl set (each text once per context: later calls copy).
    pub fn set(&self, text: &str) -> IslResult<Set> {
        if let Some(s) = self.parsed.borrow().sets.get(text) {
            return s.copy().map_err(|e| self.fail(e));
        }
        let s =
            Set::read_from_str(&self.ctx, text).map_err(|e| self.annotate(self.fail(e), text))?;
        let mut parsed = self.parsed.borrow_mut();
        if parsed.sets.len() < MAX_PARSED {
            parsed
                .sets
                .insert(text.to_string(), s.copy().map_err(|e| self.fail(e))?);
        }
        Ok(s)
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
        self.restore_limit();
        r
    }

    fn print_fail(&self, what: &str) -> IslFail {
        if self.expired() {
            IslFail::Deadline(self.budget_ms)
        } else {
            IslFail::Error(format!("isl could not print a {what}"))
        }
    }

    /// Prints a map (without the operation limit). A map of this context
    /// is kept with its text, so that a later stage reading the text back
    /// ([`Isl::map`]) gets the map itself without parsing.
    pub fn map_str(&self, m: &Map) -> IslResult<String> {
        // SAFETY: `m.ptr` is a live isl_map owned by `m`; isl_map_to_str only
        // reads it and returns a malloc'ed string (or NULL), which we free.
        let text = self
            .unlimited(|| unsafe { owned_str(isl_map_to_str(m.ptr)) })
            .ok_or_else(|| self.print_fail("map"))?;
        // SAFETY: reads the context pointer of a live isl_map.
        let ours = unsafe { isl_map_get_ctx(m.ptr) } == self.ctx.ptr;
        self.keep(ours, &text, |p| &mut p.maps, || m.copy());
        Ok(text)
    }

    /// Keeps `copy()`, an object of this context when `ours`, under its
    /// printed `text` in the parse cache's `table` (see [`Isl::map_str`]).
    fn keep<T>(
        &self,
        ours: bool,
        text: &str,
        table: fn(&mut Parsed) -> &mut std::collections::HashMap<String, T>,
        copy: impl FnOnce() -> Result<T, LibISLError>,
    ) {
        if !ours {
            return;
        }
        let mut parsed = self.parsed.borrow_mut();
        let table = table(&mut parsed);
        if table.len() < MAX_PARSED && !table.contains_key(text) {
            if let Ok(c) = self.unlimited(copy) {
                table.insert(text.to_string(), c);
            }
        }
    }

    /// Keeps `set`, built from the values `text` says, under that text, so
    /// that reading the text gives the set without parsing.
    pub(crate) fn keep_set(&self, text: &str, set: &Set) {
        // SAFETY: reads the context pointer of a live isl_set.
        let ours = unsafe { isl_set_get_ctx(set.ptr) } == self.ctx.ptr;
        self.keep(ours, text, |p| &mut p.sets, || set.copy());
    }

    /// [`Isl::keep_set`] for a map.
    pub(crate) fn keep_map(&self, text: &str, map: &Map) {
        // SAFETY: reads the context pointer of a live isl_map.
        let ours = unsafe { isl_map_get_ctx(map.ptr) } == self.ctx.ptr;
        self.keep(ours, text, |p| &mut p.maps, || map.copy());
    }

    /// Whether the parse cache has `text` as a map.
    pub(crate) fn is_kept_map(&self, text: &str) -> bool {
        self.parsed.borrow().maps.contains_key(text)
    }

    /// The relations between two integers `{ [a] -> [b] : a R b }` of one
    /// order ([`Order`]), built (the partitioner's intervals and runs).
    pub fn order(&self, order: Order) -> IslResult<Map> {
        let sp = isl_rs::Space::set_alloc(&self.ctx, 0, 1).map_err(|e| self.fail(e))?;
        match order {
            Order::AtLeast => Map::lex_le(sp),
            Order::AtMost => Map::lex_ge(sp),
            Order::Above => Map::lex_lt(sp),
            Order::Predecessor => {
                let ls = isl_rs::LocalSpace::from_space(sp).map_err(|e| self.fail(e))?;
                isl_rs::Aff::var_on_domain(ls, isl_rs::DimType::Set, 0)
                    .and_then(|a| a.add_constant_si(-1))
                    .and_then(Map::from_aff)
            }
        }
        .map_err(|e| self.fail(e))
    }

    /// Prints a set (without the operation limit); a set of this context is
    /// kept with its text (as in [`Isl::map_str`]).
    pub fn set_str(&self, s: &Set) -> IslResult<String> {
        // SAFETY: as in `map_str`.
        let text = self
            .unlimited(|| unsafe { owned_str(isl_set_to_str(s.ptr)) })
            .ok_or_else(|| self.print_fail("set"))?;
        // SAFETY: reads the context pointer of a live isl_set.
        let ours = unsafe { isl_set_get_ctx(s.ptr) } == self.ctx.ptr;
        self.keep(ours, &text, |p| &mut p.sets, || s.copy());
        Ok(text)
    }

    /// Prints a piecewise quasi-affine expression (without the operation limit).
    pub fn pw_aff_str(&self, p: &PwAff) -> IslResult<String> {
        // SAFETY: as in `map_str`, for an isl_pw_aff owned by `p`.
        self.unlimited(|| unsafe { owned_str(isl_pw_aff_to_str(p.ptr)) })
            .ok_or_else(|| self.print_fail("piecewise expression"))
    }

    /// The value of a piecewise quasi-affine expression, as the range file
    /// stores it.
    pub fn pw_expr(&self, p: &PwAff) -> IslResult<ranges_format::PwExpr> {
        let text = self.pw_aff_str(p)?;
        ranges_format::PwExpr::parse(&text).map_err(|e| {
            IslFail::Error(format!(
                "isl printed an expression clpart cannot read ({e}): '{text}'"
            ))
        })
    }

    /// A copy of `s` (which may belong to another context) in this context.
    pub fn import_set(&self, s: &Set) -> IslResult<Set> {
        // SAFETY: as in `map_str`; printing only reads `s`.
        let text =
            unsafe { owned_str(isl_set_to_str(s.ptr)) }.ok_or_else(|| self.print_fail("set"))?;
        self.set(&text)
    }
}

/// An order between two integers, as a relation `{ [a] -> [b] }`
/// ([`Isl::order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `b >= a`
    AtLeast,
    /// `b <= a`
    AtMost,
    /// `b > a`
    Above,
    /// `b = a - 1`
    Predecessor,
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
pub trait IslOk<T> {
    fn ok_in(self, isl: &Isl) -> IslResult<T>;
}

impl<T> IslOk<T> for Result<T, LibISLError> {
    fn ok_in(self, isl: &Isl) -> IslResult<T> {
        self.map_err(|e| isl.fail(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const WORK: &str = "[n, m] -> { [i, j] : 0 <= i < n and 0 <= j < m and 3i + 5j <= n + m }";

    #[test]
    fn a_step_past_its_deadline_fails_and_the_context_works_on() {
        let isl = Isl::new(0);
        let (failed, passed) = isl.within(Instant::now(), || {
            // the step's watchdog stops the context within moments
            let give_up = Instant::now() + Duration::from_secs(10);
            loop {
                let r = isl.set(WORK).and_then(|s| s.lexmin().ok_in(&isl));
                if r.is_err() || Instant::now() > give_up {
                    return r.is_err();
                }
            }
        });
        assert!(failed && passed, "failed {failed}, passed {passed}");
        assert!(!isl.expired());
        let s = isl.set(WORK).unwrap().lexmin().ok_in(&isl);
        assert!(s.is_ok(), "the context did not work on after the step");
    }

    #[test]
    fn a_step_within_its_deadline_does_not_pass_it() {
        let isl = Isl::new(0);
        let (r, passed) = isl.within(Instant::now() + Duration::from_secs(60), || {
            isl.set(WORK).and_then(|s| s.lexmin().ok_in(&isl)).is_ok()
        });
        assert!(r && !passed);
    }

    #[test]
    fn the_orders_are_the_relations_they_name() {
        let isl = Isl::new(0);
        for (order, text) in [
            (Order::AtLeast, "{ [a] -> [x] : x >= a }"),
            (Order::AtMost, "{ [b] -> [x] : x <= b }"),
            (Order::Above, "{ [e] -> [o] : o > e }"),
            (Order::Predecessor, "{ [o] -> [o - 1] }"),
        ] {
            let built = isl.order(order).unwrap();
            assert!(
                built.is_equal(&isl.map(text).unwrap()).unwrap(),
                "{order:?}"
            );
        }
    }

    #[test]
    fn a_printed_set_of_the_context_is_read_back_as_itself_and_a_foreign_one_is_not_kept() {
        let isl = Isl::new(0);
        let s = isl.set(WORK).unwrap().lexmin().ok_in(&isl).unwrap();
        let text = isl.set_str(&s).unwrap();
        assert!(isl.parsed.borrow().sets.contains_key(&text));
        let back = isl.set(&text).unwrap();
        assert!(back.is_equal(&s).unwrap());
        // a set of another context is printed, never kept
        let other = Isl::new(0);
        let t = other.set("{ [k] : 0 <= k < 7 }").unwrap();
        let text = isl.set_str(&t).unwrap();
        assert!(!isl.parsed.borrow().sets.contains_key(&text));
    }
}
