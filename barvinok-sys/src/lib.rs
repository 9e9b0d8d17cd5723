//! barvinok, loaded at run time: exact counts of the integer points of
//! parametric sets (`isl_set_card`), as piecewise quasi-polynomials.
//!
//! barvinok (GPL-2.0-or-later) is not linked into clpart and not needed to
//! build it. The user fetches PyPI's `islpy-barvinok` wheel
//! (`scripts/setup.sh` does, into [`cache_dir`]); its folder
//! `islpy_barvinok.libs/` holds `libbarvinok-*.so.23` and what it needs (its
//! own isl, PolyLib-GMP, NTL, GMP, each renamed by auditwheel and found
//! through an `$ORIGIN` rpath). [`Library::load`] opens `libbarvinok` with
//! `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)` and looks up the few
//! functions used (no headers ship with the wheel: the prototypes are
//! declared here).
//!
//! Isolation from the isl that isl-rs builds into clpart: that isl is
//! linked statically and its symbols are not exported by clpart's
//! executables or `libclpart.so`; the wheel's libraries are opened
//! `RTLD_LOCAL` (their symbols never enter the global scope, so nothing of
//! clpart binds to them) and `RTLD_DEEPBIND` (they resolve `isl_*` in their
//! own isl first). Functions are taken with `dlsym` from the barvinok
//! handle, whose lookup scope is barvinok and its dependencies only.
//!
//! Where the libraries are: [`locate`] (the environment variable
//! `CLPART_BARVINOK_DIR`, else [`cache_dir`]). [`library`] loads them once
//! per process and remembers why it could not.
//!
//! A [`Context`] owns one isl context of barvinok's (with barvinok's
//! options); [`Context::card`] reads a set in isl's text syntax and gives
//! its count as [`Card`] pieces (condition text, value text), in isl's text
//! syntax. barvinok computes without a time limit of its own and may abort
//! the process on internal errors: callers run it in a process they can
//! kill (clpart: the forked counting sandbox of `partitioner::ehrhart`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The most orders of a union's pieces [`Context::card_parts`] tries.
pub const PART_ORDERS: usize = 8;

/// The environment variable naming the folder with the wheel's libraries
/// (the folder `islpy_barvinok.libs`, or one that contains it).
pub const DIR_VAR: &str = "CLPART_BARVINOK_DIR";

/// Why barvinok could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No `libbarvinok*.so*` in the folders searched.
    #[error("no libbarvinok in {searched} (run scripts/setup.sh, or set {DIR_VAR})")]
    NotFound {
        /// The folders searched, comma-separated.
        searched: String,
    },
    /// `dlopen` failed.
    #[error("cannot load {path}: {message}")]
    Open {
        /// The library file.
        path: String,
        /// `dlerror`'s message.
        message: String,
    },
    /// The library lacks a function clpart uses.
    #[error("{path} has no symbol '{symbol}'")]
    Symbol {
        /// The library file.
        path: String,
        /// The missing symbol.
        symbol: &'static str,
    },
}

/// Why a count failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    /// The text has a NUL byte.
    #[error("set text {0:?} has a NUL byte")]
    Nul(String),
    /// isl could not allocate a context.
    #[error("barvinok cannot allocate an isl context")]
    Context,
    /// isl could not read the set.
    #[error("barvinok cannot read {text:?}: {message}")]
    Parse {
        /// The offending text.
        text: String,
        /// isl's message.
        message: String,
    },
    /// barvinok failed while counting.
    #[error("barvinok failed to count: {message}")]
    Failed {
        /// isl's message.
        message: String,
    },
    /// The set is unbounded for some parameter values (the count is `infty`).
    #[error("the set is unbounded (barvinok counts infinitely many points)")]
    Unbounded,
    /// [`Context::card_parts`] found more parts than it may count.
    #[error("its disjoint decomposition has {parts} parts (at most {limit} are counted)")]
    TooManyParts {
        /// The parts isl made.
        parts: usize,
        /// The most allowed.
        limit: usize,
    },
}

type IslCtx = c_void;
type IslSet = c_void;
type IslQp = c_void;
type IslPwQp = c_void;
type IslBasicSet = c_void;
type PieceFn = unsafe extern "C" fn(*mut IslSet, *mut IslQp, *mut c_void) -> c_int;
type BasicSetFn = unsafe extern "C" fn(*mut IslBasicSet, *mut c_void) -> c_int;

/// The functions used, from the barvinok handle (prototypes of isl 0.23+
/// and barvinok 0.41).
#[derive(Clone, Copy)]
struct Fns {
    /// `struct isl_args barvinok_options_args` (a data symbol).
    options_args: *mut c_void,
    options_new: unsafe extern "C" fn() -> *mut c_void,
    ctx_alloc_with_options: unsafe extern "C" fn(*mut c_void, *mut c_void) -> *mut IslCtx,
    ctx_free: unsafe extern "C" fn(*mut IslCtx),
    ctx_last_error_msg: unsafe extern "C" fn(*mut IslCtx) -> *const c_char,
    ctx_reset_error: unsafe extern "C" fn(*mut IslCtx),
    options_set_on_error: unsafe extern "C" fn(*mut IslCtx, c_int) -> c_int,
    set_read_from_str: unsafe extern "C" fn(*mut IslCtx, *const c_char) -> *mut IslSet,
    set_to_str: unsafe extern "C" fn(*mut IslSet) -> *mut c_char,
    set_free: unsafe extern "C" fn(*mut IslSet) -> *mut IslSet,
    set_card: unsafe extern "C" fn(*mut IslSet) -> *mut IslPwQp,
    pwqp_foreach_piece: unsafe extern "C" fn(*mut IslPwQp, PieceFn, *mut c_void) -> c_int,
    pwqp_free: unsafe extern "C" fn(*mut IslPwQp) -> *mut IslPwQp,
    qp_to_str: unsafe extern "C" fn(*mut IslQp) -> *mut c_char,
    qp_free: unsafe extern "C" fn(*mut IslQp) -> *mut IslQp,
    set_make_disjoint: unsafe extern "C" fn(*mut IslSet) -> *mut IslSet,
    set_foreach_basic_set: unsafe extern "C" fn(*mut IslSet, BasicSetFn, *mut c_void) -> c_int,
    set_from_basic_set: unsafe extern "C" fn(*mut IslBasicSet) -> *mut IslSet,
    set_union: unsafe extern "C" fn(*mut IslSet, *mut IslSet) -> *mut IslSet,
    set_copy: unsafe extern "C" fn(*mut IslSet) -> *mut IslSet,
    set_n_basic_set: unsafe extern "C" fn(*mut IslSet) -> c_int,
}

/// The loaded barvinok library (never unloaded while a [`Context`] lives:
/// contexts borrow it).
pub struct Library {
    handle: *mut c_void,
    fns: Fns,
    path: PathBuf,
}

// SAFETY: the handle and the function pointers are only read after loading;
// isl contexts are created per use and never shared between threads.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("path", &self.path).finish()
    }
}

/// The default folder of the wheel's libraries: `$XDG_CACHE_HOME/clpart/barvinok`,
/// else `$HOME/.cache/clpart/barvinok` (where `scripts/setup.sh` unpacks them).
pub fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("clpart").join("barvinok"))
}

/// The `libbarvinok` file to load: in `$CLPART_BARVINOK_DIR` when set
/// (only there), else in [`cache_dir`]; in each folder, directly or under
/// `islpy_barvinok.libs/`.
pub fn locate() -> Result<PathBuf, LoadError> {
    let dirs: Vec<PathBuf> = match std::env::var_os(DIR_VAR) {
        Some(d) => vec![PathBuf::from(d)],
        None => cache_dir().into_iter().collect(),
    };
    for d in &dirs {
        if let Some(p) = find_in(d) {
            return Ok(p);
        }
    }
    Err(LoadError::NotFound {
        searched: if dirs.is_empty() {
            "no folder ($HOME unset)".into()
        } else {
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        },
    })
}

/// `libbarvinok*.so*` in `dir` or `dir/islpy_barvinok.libs`.
pub fn find_in(dir: &Path) -> Option<PathBuf> {
    for d in [dir.to_path_buf(), dir.join("islpy_barvinok.libs")] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libbarvinok") && n.contains(".so"))
            })
            .collect();
        found.sort();
        if let Some(p) = found.pop() {
            return Some(p);
        }
    }
    None
}

/// The process's barvinok: located and loaded at the first call; later calls
/// give the same library or the same error.
pub fn library() -> Result<&'static Library, LoadError> {
    static LIB: OnceLock<Result<Library, LoadError>> = OnceLock::new();
    LIB.get_or_init(|| Library::load(&locate()?))
        .as_ref()
        .map_err(Clone::clone)
}

/// The function pointer of type `F` at address `p`.
///
/// # Safety
/// `F` must be an `extern "C" fn` type matching the function at `p`.
unsafe fn fn_ptr<F: Copy>(p: *mut c_void) -> F {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
    // SAFETY: same size (checked above); the caller vouches for the type.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Library {
    /// Opens the `libbarvinok` file at `path` (its dependencies come from
    /// its own folder) and looks up the functions used.
    pub fn load(path: &Path) -> Result<Library, LoadError> {
        let shown = path.display().to_string();
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| LoadError::Open {
            path: shown.clone(),
            message: "the path has a NUL byte".into(),
        })?;
        // SAFETY: c is a NUL-terminated path; the flags keep the library's
        // symbols out of the global scope (see the module docs).
        let handle = unsafe {
            libc::dlopen(
                c.as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
            )
        };
        if handle.is_null() {
            return Err(LoadError::Open {
                path: shown,
                message: dlerror_text(),
            });
        }
        let sym = |name: &'static str| -> Result<*mut c_void, LoadError> {
            let cname = CString::new(name).expect("symbol names have no NUL");
            // SAFETY: handle is a live dlopen handle; cname is NUL-terminated.
            let p = unsafe { libc::dlsym(handle, cname.as_ptr()) };
            if p.is_null() {
                Err(LoadError::Symbol {
                    path: shown.clone(),
                    symbol: name,
                })
            } else {
                Ok(p)
            }
        };
        macro_rules! f {
            ($name:literal) => {
                // SAFETY: the symbol is the function of that name, whose
                // prototype is the field's type (isl's and barvinok's API).
                unsafe { fn_ptr(sym($name)?) }
            };
        }
        let fns = (|| -> Result<Fns, LoadError> {
            Ok(Fns {
                options_args: sym("barvinok_options_args")?,
                options_new: f!("barvinok_options_new_with_defaults"),
                ctx_alloc_with_options: f!("isl_ctx_alloc_with_options"),
                ctx_free: f!("isl_ctx_free"),
                ctx_last_error_msg: f!("isl_ctx_last_error_msg"),
                ctx_reset_error: f!("isl_ctx_reset_error"),
                options_set_on_error: f!("isl_options_set_on_error"),
                set_read_from_str: f!("isl_set_read_from_str"),
                set_to_str: f!("isl_set_to_str"),
                set_free: f!("isl_set_free"),
                set_card: f!("isl_set_card"),
                pwqp_foreach_piece: f!("isl_pw_qpolynomial_foreach_piece"),
                pwqp_free: f!("isl_pw_qpolynomial_free"),
                qp_to_str: f!("isl_qpolynomial_to_str"),
                qp_free: f!("isl_qpolynomial_free"),
                set_make_disjoint: f!("isl_set_make_disjoint"),
                set_foreach_basic_set: f!("isl_set_foreach_basic_set"),
                set_from_basic_set: f!("isl_set_from_basic_set"),
                set_union: f!("isl_set_union"),
                set_copy: f!("isl_set_copy"),
                set_n_basic_set: f!("isl_set_n_basic_set"),
            })
        })();
        match fns {
            Ok(fns) => Ok(Library {
                handle,
                fns,
                path: path.to_path_buf(),
            }),
            Err(e) => {
                // SAFETY: nothing of the library is in use.
                unsafe { libc::dlclose(handle) };
                Err(e)
            }
        }
    }

    /// The library file loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A new isl context with barvinok's default options.
    pub fn context(&self) -> Result<Context<'_>, CardError> {
        // SAFETY: barvinok_options_new_with_defaults allocates options for
        // barvinok_options_args; the context takes ownership of them.
        let ctx = unsafe {
            (self.fns.ctx_alloc_with_options)(self.fns.options_args, (self.fns.options_new)())
        };
        if ctx.is_null() {
            return Err(CardError::Context);
        }
        // ISL_ON_ERROR_CONTINUE: errors are returned (NULL), not printed or aborted.
        // SAFETY: ctx is live.
        unsafe { (self.fns.options_set_on_error)(ctx, 1) };
        Ok(Context { lib: self, ctx })
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: no Context outlives the library (they borrow it).
        unsafe { libc::dlclose(self.handle) };
    }
}

/// One isl context of barvinok's; freed on drop.
pub struct Context<'a> {
    lib: &'a Library,
    ctx: *mut IslCtx,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: ctx is live and every object made in it has been freed.
        unsafe { (self.lib.fns.ctx_free)(self.ctx) };
    }
}

/// One piece of a count: where it holds and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The condition on the parameters, in isl's syntax without the header
    /// and braces (`N > 0 and lo < hi <= 1000`); empty when always true.
    pub domain: String,
    /// The quasi-polynomial, without header and braces
    /// (`(N * hi + (1000 - hi) * floor((hi)/1000))`).
    pub value: String,
}

/// A count: disjoint pieces; outside all of them the count is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The parameter names, in the set's order.
    pub params: Vec<String>,
    /// The pieces.
    pub pieces: Vec<Piece>,
}

/// Takes an isl-allocated string (malloc) into a `String`.
fn take_str(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: isl returns a NUL-terminated malloc'd string, ours to free.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: as above.
    unsafe { libc::free(p.cast()) };
    Some(s)
}

/// Splits isl's `[N, M] -> { BODY }` (or `{ BODY }`) into the names and the body.
pub fn split_header(text: &str) -> Option<(Vec<String>, &str)> {
    let t = text.trim();
    let (names, rest) = match t.strip_prefix('[') {
        Some(r) => {
            let close = r.find(']')?;
            let names = r[..close]
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            (
                names,
                r[close + 1..].trim_start().strip_prefix("->")?.trim_start(),
            )
        }
        None => (Vec::new(), t),
    };
    let body = rest.strip_prefix('{')?.strip_suffix('}')?.trim();
    Some((names, body))
}

struct Collect<'a> {
    fns: &'a Fns,
    pieces: Vec<Piece>,
    bad: Option<String>,
}

unsafe extern "C" fn collect_piece(set: *mut IslSet, qp: *mut IslQp, user: *mut c_void) -> c_int {
    // SAFETY: user is the Collect given to foreach_piece; set and qp are ours.
    let c = unsafe { &mut *(user as *mut Collect<'_>) };
    let set_text = take_str(unsafe { (c.fns.set_to_str)(set) });
    let qp_text = take_str(unsafe { (c.fns.qp_to_str)(qp) });
    unsafe {
        (c.fns.set_free)(set);
        (c.fns.qp_free)(qp);
    }
    let domain = set_text
        .as_deref()
        .and_then(split_header)
        .map(|(_, b)| b.strip_prefix(':').unwrap_or(b).trim().to_string());
    let value = qp_text
        .as_deref()
        .and_then(split_header)
        .map(|(_, b)| b.to_string());
    match (domain, value) {
        (Some(domain), Some(value)) => {
            c.pieces.push(Piece { domain, value });
            0
        }
        _ => {
            c.bad = Some(format!("unexpected piece text {set_text:?} / {qp_text:?}"));
            -1
        }
    }
}

impl Context<'_> {
    fn last_error(&self) -> String {
        // SAFETY: ctx is live; the message is NULL or NUL-terminated, owned by isl.
        let m = unsafe { (self.lib.fns.ctx_last_error_msg)(self.ctx) };
        let s = if m.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: non-NULL, NUL-terminated.
            unsafe { CStr::from_ptr(m) }.to_string_lossy().into_owned()
        };
        // SAFETY: ctx is live.
        unsafe { (self.lib.fns.ctx_reset_error)(self.ctx) };
        s
    }

    /// Reads `set_text` and gives the set and its parameter names.
    fn read(&self, set_text: &str) -> Result<(*mut IslSet, Vec<String>), CardError> {
        let fns = &self.lib.fns;
        let c = CString::new(set_text).map_err(|_| CardError::Nul(set_text.to_string()))?;
        // SAFETY: ctx is live; c is NUL-terminated.
        let set = unsafe { (fns.set_read_from_str)(self.ctx, c.as_ptr()) };
        if set.is_null() {
            return Err(CardError::Parse {
                text: set_text.to_string(),
                message: self.last_error(),
            });
        }
        // SAFETY: set is live; isl_set_to_str does not take it.
        let params = take_str(unsafe { (fns.set_to_str)(set) })
            .as_deref()
            .and_then(split_header)
            .map(|(names, _)| names)
            .unwrap_or_default();
        Ok((set, params))
    }

    /// The count of `set` (taken) as pieces.
    fn card_set(&self, set: *mut IslSet) -> Result<Vec<Piece>, CardError> {
        let fns = &self.lib.fns;
        // SAFETY: isl_set_card takes the set.
        let pwqp = unsafe { (fns.set_card)(set) };
        if pwqp.is_null() {
            return Err(CardError::Failed {
                message: self.last_error(),
            });
        }
        let mut collect = Collect {
            fns,
            pieces: Vec::new(),
            bad: None,
        };
        // SAFETY: pwqp is live (foreach_piece does not take it); the
        // callback gets our Collect and owns each piece's set and polynomial.
        let r = unsafe {
            (fns.pwqp_foreach_piece)(
                pwqp,
                collect_piece,
                (&mut collect as *mut Collect<'_>).cast(),
            )
        };
        // SAFETY: pwqp is ours.
        unsafe { (fns.pwqp_free)(pwqp) };
        if let Some(bad) = collect.bad {
            return Err(CardError::Failed { message: bad });
        }
        if r != 0 {
            return Err(CardError::Failed {
                message: self.last_error(),
            });
        }
        if collect
            .pieces
            .iter()
            .any(|p| p.value.contains("infty") || p.value.contains("NaN"))
        {
            return Err(CardError::Unbounded);
        }
        Ok(collect.pieces)
    }

    /// The number of integer points of the set `set_text` (isl syntax, e.g.
    /// `[N, lo, hi] -> { A[k] : exists (i, j : k = 1000i + j and lo <= j < hi and 0 <= i < N and 0 <= j < 1000) }`)
    /// as a piecewise quasi-polynomial of its parameters.
    pub fn card(&self, set_text: &str) -> Result<Card, CardError> {
        let (set, params) = self.read(set_text)?;
        Ok(Card {
            params,
            pieces: self.card_set(set)?,
        })
    }

    /// The counts of disjoint parts of the union of the sets `set_texts`
    /// whose sum is its count: isl's disjoint decomposition
    /// (`isl_set_make_disjoint`), each basic set counted on its own.
    /// Counting a union whole makes barvinok refine the pieces of every part
    /// against each other, which for some unions in many parameters takes
    /// seconds and gives hundreds of chambers; the parts are small problems.
    /// The decomposition depends on the order of the union's pieces (22 or
    /// 149 parts for the seven footprints of a 3-D 7-point stencil): the
    /// order given and each piece moved to the front are tried (at most
    /// [`PART_ORDERS`]) and the fewest parts kept. At most `max_parts`
    /// parts: more is [`CardError::TooManyParts`].
    pub fn card_parts(&self, set_texts: &[&str], max_parts: usize) -> Result<Vec<Card>, CardError> {
        let fns = &self.lib.fns;
        let mut pieces = Vec::with_capacity(set_texts.len());
        let mut params = Vec::new();
        let free_all = |sets: &[*mut IslSet]| {
            for &s in sets {
                // SAFETY: each is ours and freed once.
                unsafe { (fns.set_free)(s) };
            }
        };
        for t in set_texts {
            match self.read(t) {
                Ok((s, p)) => {
                    pieces.push(s);
                    params = p;
                }
                Err(e) => {
                    free_all(&pieces);
                    return Err(e);
                }
            }
        }
        if pieces.is_empty() {
            return Ok(Vec::new());
        }
        // The disjoint union with `first` in front, or NULL.
        let disjoint = |first: usize| -> *mut IslSet {
            let order = std::iter::once(first).chain((0..pieces.len()).filter(|&k| k != first));
            let mut u: *mut IslSet = std::ptr::null_mut();
            for k in order {
                // SAFETY: pieces[k] is live; copy gives a new reference.
                let p = unsafe { (fns.set_copy)(pieces[k]) };
                // SAFETY: union takes both (NULL propagates as an error).
                u = if u.is_null() {
                    p
                } else {
                    unsafe { (fns.set_union)(u, p) }
                };
            }
            // SAFETY: make_disjoint takes the set (NULL gives NULL).
            unsafe { (fns.set_make_disjoint)(u) }
        };
        let mut best: *mut IslSet = std::ptr::null_mut();
        let mut best_n = usize::MAX;
        for first in 0..pieces.len().min(PART_ORDERS) {
            let d = disjoint(first);
            // SAFETY: d is live or NULL (then n_basic_set gives -1).
            let n = if d.is_null() {
                -1
            } else {
                unsafe { (fns.set_n_basic_set)(d) }
            };
            if n >= 0 && (n as usize) < best_n {
                if !best.is_null() {
                    free_all(&[best]);
                }
                best = d;
                best_n = n as usize;
            } else if !d.is_null() {
                free_all(&[d]);
            }
        }
        free_all(&pieces);
        if best.is_null() {
            return Err(CardError::Failed {
                message: self.last_error(),
            });
        }
        let set = best;
        // SAFETY: set is live; isl_set_to_str does not take it.
        if let Some((names, _)) = take_str(unsafe { (fns.set_to_str)(set) })
            .as_deref()
            .and_then(split_header)
        {
            params = names;
        }
        struct Parts {
            from_basic: unsafe extern "C" fn(*mut IslBasicSet) -> *mut IslSet,
            sets: Vec<*mut IslSet>,
        }
        unsafe extern "C" fn take(b: *mut IslBasicSet, user: *mut c_void) -> c_int {
            // SAFETY: user is the Parts given to foreach_basic_set; b is ours.
            let parts = unsafe { &mut *(user as *mut Parts) };
            // SAFETY: from_basic_set takes b.
            let s = unsafe { (parts.from_basic)(b) };
            if s.is_null() {
                return -1;
            }
            parts.sets.push(s);
            0
        }
        let mut parts = Parts {
            from_basic: fns.set_from_basic_set,
            sets: Vec::new(),
        };
        // SAFETY: set is live (foreach does not take it); the callback owns each basic set.
        let r =
            unsafe { (fns.set_foreach_basic_set)(set, take, (&mut parts as *mut Parts).cast()) };
        // SAFETY: set is ours.
        unsafe { (fns.set_free)(set) };
        if r != 0 {
            free_all(&parts.sets);
            return Err(CardError::Failed {
                message: self.last_error(),
            });
        }
        if parts.sets.len() > max_parts {
            free_all(&parts.sets);
            return Err(CardError::TooManyParts {
                parts: parts.sets.len(),
                limit: max_parts,
            });
        }
        let mut out = Vec::with_capacity(parts.sets.len());
        let mut sets = parts.sets.into_iter();
        while let Some(s) = sets.next() {
            match self.card_set(s) {
                Ok(pieces) => out.push(Card {
                    params: params.clone(),
                    pieces,
                }),
                Err(e) => {
                    free_all(&sets.collect::<Vec<_>>());
                    return Err(e);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_split() {
        assert_eq!(
            split_header("[N, lo] -> {  : N > 0 }"),
            Some((vec!["N".to_string(), "lo".to_string()], ": N > 0"))
        );
        assert_eq!(split_header("{ 10 }"), Some((vec![], "10")));
        assert_eq!(
            split_header("[N] -> { (N - floor((N)/2)) }").map(|x| x.1),
            Some("(N - floor((N)/2))")
        );
        assert_eq!(split_header("N"), None);
    }

    #[test]
    fn a_missing_folder_is_not_found() {
        assert_eq!(find_in(Path::new("/nonexistent/clpart")), None);
    }
}
