//! Runs PolyLib (and barvinok, module `barvinok`) in a forked child process.
//!
//! PolyLib cannot be trusted to return: its 64-bit build handles arithmetic
//! overflow in `Polyhedron_Enumerate` by printing to stderr and failing an
//! `assert` (SIGABRT), it prints its results on stdout, and it keeps global
//! state. So PolyLib (and barvinok) run in a child made by `fork`: the child
//! points its stdout and stderr at `/dev/null`, does the work, writes the
//! encoded results into a pipe and `_exit`s. The parent reads the results
//! with a time limit. An abort, a crash or a time-out in the engine becomes
//! an [`EhrhartError`]; the calling process and its output are untouched.
//!
//! A batch ([`run_batch`]) costs one child for all its items while they
//! succeed: the child streams one frame per item (`[n_words, go_on, words...]`,
//! 8 bytes a word, little-endian) and the parent reads each frame with the
//! item's own time limit. An item that runs past its limit, or a child that
//! dies, costs that item (the child is killed) and a fresh child takes the
//! items after it. A child also stops after an item whose work says not to
//! go on (a failure that may leave the engine's global state unsound), and a
//! fresh child takes the rest.
//!
//! The child of a multi-threaded parent runs only the forking thread; it
//! uses malloc (which glibc makes safe after `fork`) and the engines, and
//! takes no lock that another thread of the parent could hold. Batches may
//! run at once from several threads (the partitioner counts and finds
//! vertices side by side): each child first closes every descriptor but its
//! own pipe's write end, so a child never holds another batch's pipe open
//! (which would delay that batch's end-of-file).
//!
//! A child is reaped as soon as it is done (or killed), never later: in an
//! application (the OpenCL layer) a pid kept for a later reap could be
//! reaped by the application and reused for a child of its own, whose exit
//! status a late reap would then take.
//!
//! **Warm children** ([`WarmPool`], [`run_jobs`]). Forking a large process
//! and warming the engines up in the child costs a few milliseconds per
//! batch, more than a small kernel's counts. A program of its own (the
//! `clpart` command, the bench) may start warm children once, early, while
//! it is small ([`WarmPool::start`]): each waits for jobs (words, handled by
//! the pool's `serve`) on a socket and answers each with a frame as above.
//! A batch takes a warm child if one is free and falls back to a fresh
//! child per batch otherwise; a warm child whose job failed, timed out or
//! said not to go on is killed and reaped at once, and the batch's remaining
//! jobs go to a fresh child; a new warm child replaces it (forked then, once
//! the engines are loaded here: [`WarmPool::before_fork`]). A warm child
//! ends when its socket closes (this process exited). Libraries (the OpenCL
//! layer, the C API) never start warm children: a child that outlives every
//! batch could be waited for by the application's own `wait`.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::EhrhartError;

/// The niceness of a child forked under [`at_low_priority`].
const LOW_PRIORITY_NICENESS: libc::c_int = 10;

thread_local! {
    /// Whether this thread's children run at a low priority ([`at_low_priority`]).
    static LOW_PRIORITY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the children this thread forks in it at a lower priority
/// (niceness `LOW_PRIORITY_NICENESS`): work made ahead while this
/// process does other work, which it must not slow down.
pub fn at_low_priority<T>(f: impl FnOnce() -> T) -> T {
    let before = LOW_PRIORITY.with(|p| p.replace(true));
    let r = f();
    LOW_PRIORITY.with(|p| p.set(before));
    r
}

/// Children forked once that take jobs ([`run_jobs`]); see the module comment.
pub(crate) struct WarmPool {
    /// What a child does with a job's words.
    pub serve: fn(&[i64]) -> Reply,
    /// What a child does once, right after it is forked (loading and first
    /// use of the engines).
    pub warm_up: fn(),
    /// What this process does before it forks a child to replace a retired
    /// one (loading the engines first, so that the child need not load
    /// them while another thread may hold the dynamic loader's lock).
    pub before_fork: fn(),
    /// The free children.
    pub free: std::sync::Mutex<Vec<Warm>>,
}

/// A warm child: the child (its pid and the read end of its replies) and
/// the write end of its jobs.
pub(crate) struct Warm {
    child: Child,
    jobs: libc::c_int,
}

impl Drop for Warm {
    fn drop(&mut self) {
        // SAFETY: the jobs' end is ours; the child is killed and reaped by
        // `Child`'s drop.
        unsafe { libc::close(self.jobs) };
    }
}

impl WarmPool {
    /// Forks `n` warm children (at most, some when forking fails). Call it
    /// early in a program, while the process is small and has no other
    /// thread: a child forked while another thread holds the dynamic
    /// loader's lock could never load a library.
    pub(crate) fn start(&'static self, n: usize) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..n {
            match Warm::spawn(self) {
                Some(w) => free.push(w),
                None => break,
            }
        }
    }

    fn take(&self) -> Option<Warm> {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    fn give_back(&self, w: Warm) {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).push(w);
    }
}

impl Warm {
    fn spawn(pool: &'static WarmPool) -> Option<Warm> {
        let mut jobs = [0 as libc::c_int; 2];
        // SAFETY: jobs has room for the two descriptors.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                jobs.as_mut_ptr(),
            )
        } != 0
        {
            return None;
        }
        let mut replies = [0 as libc::c_int; 2];
        // SAFETY: replies has room for the two descriptors.
        if unsafe { libc::pipe2(replies.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            // SAFETY: both are ours.
            unsafe {
                libc::close(jobs[0]);
                libc::close(jobs[1]);
            }
            return None;
        }
        // SAFETY: see the module comment; the child never returns from this block.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: in the child.
            unsafe { warm_child(jobs[1], replies[1], [jobs[0], replies[0]], pool) }
        }
        // SAFETY: the child's ends are the child's now (or nobody's).
        unsafe {
            libc::close(jobs[1]);
            libc::close(replies[1]);
        }
        if pid < 0 {
            // SAFETY: ours.
            unsafe {
                libc::close(jobs[0]);
                libc::close(replies[0]);
            }
            return None;
        }
        Some(Warm {
            child: Child {
                pid,
                fd: replies[0],
                buf: Vec::new(),
                status: None,
            },
            jobs: jobs[0],
        })
    }

    /// Sends one job, to be worked on at a low priority or not (`Err` when
    /// the child is gone).
    fn send(&self, words: &[i64], low: bool) -> Result<(), ()> {
        let sent = write_all(&frame_bytes(words, low), |b| {
            // SAFETY: the buffer is valid for its length; MSG_NOSIGNAL: a
            // child that is gone gives EPIPE, not a SIGPIPE.
            unsafe { libc::send(self.jobs, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) }
        });
        sent.then_some(()).ok_or(())
    }
}

/// Runs every job of `jobs` (its words, for `pool.serve`) in a warm child of
/// `pool` while they succeed, and what is left in fresh children
/// ([`run_batch`]): per job, the words it produced or why there are none,
/// and the time the parent waited for it. Limits and `deadline` as for
/// [`run_batch`]. Under [`at_low_priority`], the child works at a lower
/// priority.
pub(crate) fn run_jobs(
    pool: &'static WarmPool,
    jobs: &[Vec<i64>],
    limits: &[Duration],
    deadline: Option<Instant>,
) -> Vec<(Result<Vec<i64>, EhrhartError>, Duration)> {
    let n = jobs.len();
    let mut out: Vec<(Result<Vec<i64>, EhrhartError>, Duration)> = Vec::with_capacity(n);
    let low = LOW_PRIORITY.with(|p| p.get());
    if let Some(mut warm) = (n > 0).then(|| pool.take()).flatten() {
        let mut healthy = true;
        while out.len() < n {
            let now = Instant::now();
            let Some(limit) = item_limit(limits[out.len()], deadline, now) else {
                break;
            };
            if warm.send(&jobs[out.len()], low).is_err() {
                // Gone (killed from outside): a fresh child takes the job.
                healthy = false;
                break;
            }
            match warm.child.frame(limit) {
                Ok(Reply { words, go_on }) => {
                    out.push((Ok(words), now.elapsed()));
                    if !go_on {
                        healthy = false;
                        break;
                    }
                }
                Err(e) => {
                    out.push((Err(e), now.elapsed()));
                    healthy = false;
                    break;
                }
            }
        }
        if healthy {
            pool.give_back(warm);
        } else {
            drop(warm);
            // A replacement, warm by the next batch.
            (pool.before_fork)();
            if let Some(w) = Warm::spawn(pool) {
                pool.give_back(w);
            }
        }
    }
    let first = out.len();
    if first < n {
        out.extend(run_batch(&limits[first..], deadline, |k| {
            (pool.serve)(&jobs[first + k])
        }));
    }
    out
}

/// A warm child's life: warm up, then one frame per job until the socket
/// closes (or a job says not to go on).
///
/// # Safety
/// Only in the child just forked by [`Warm::spawn`].
unsafe fn warm_child(
    jobs: libc::c_int,
    replies: libc::c_int,
    parents: [libc::c_int; 2],
    pool: &'static WarmPool,
) -> ! {
    for fd in parents {
        libc::close(fd);
    }
    close_all_but(&[jobs, replies]);
    quiet();
    // The warm-up (loading the engines) runs at a low priority, since the
    // program that forked this child is starting up beside it (about 4 ms
    // of a cold `clpart analyze`); only where the priority can be raised
    // back (root), so that jobs never run lower than asked.
    let nice = libc::geteuid() == 0;
    if nice {
        libc::setpriority(libc::PRIO_PROCESS, 0, LOW_PRIORITY_NICENESS);
    }
    (pool.warm_up)();
    if nice {
        libc::setpriority(libc::PRIO_PROCESS, 0, 0);
    }
    let mut low = false;
    let mut header = [0u8; HEADER_BYTES];
    loop {
        if !read_exact(jobs, &mut header) {
            libc::_exit(0);
        }
        let word =
            |k: usize| u64::from_le_bytes(header[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]));
        let (n, wants_low) = (word(0), word(1) == 1);
        let Some(n) = usize::try_from(n).ok().filter(|&n| n <= MAX_REPLY_WORDS) else {
            libc::_exit(2);
        };
        let mut bytes = vec![0u8; 8 * n];
        if !read_exact(jobs, &mut bytes) {
            libc::_exit(0);
        }
        let words: Vec<i64> = bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if wants_low != low {
            // Best effort (raising it back needs a privilege): at worst the
            // child works at the lower priority.
            libc::setpriority(
                libc::PRIO_PROCESS,
                0,
                if wants_low { LOW_PRIORITY_NICENESS } else { 0 },
            );
            low = wants_low;
        }
        let reply = match catch_unwind(AssertUnwindSafe(|| (pool.serve)(&words))) {
            Ok(reply) => reply,
            Err(_) => libc::_exit(CHILD_PANICKED),
        };
        write_frame(replies, &reply);
        if !reply.go_on {
            libc::_exit(0);
        }
    }
}

/// Reads exactly `buf.len()` bytes; `false` at the end of the stream (or an error).
///
/// # Safety
/// `fd` is an open descriptor.
unsafe fn read_exact(fd: libc::c_int, buf: &mut [u8]) -> bool {
    let mut off = 0;
    while off < buf.len() {
        let n = libc::read(fd, buf[off..].as_mut_ptr().cast(), buf.len() - off);
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if n == 0 {
            return false;
        }
        off += n as usize;
    }
    true
}

/// Largest reply accepted from the child for one item (its words, 8 bytes each).
const MAX_REPLY_WORDS: usize = 1 << 24;

/// Bytes of a frame's header: the number of words and the go-on flag.
const HEADER_BYTES: usize = 16;

/// Exit code of a child whose work panicked.
const CHILD_PANICKED: i32 = 101;

/// What the child's work gives for one item: the reply's words, and whether
/// the same child may go on with the next item.
pub(crate) struct Reply {
    pub words: Vec<i64>,
    pub go_on: bool,
}

/// Runs `work` in a forked child with stdout and stderr silenced and returns
/// the words it produced. `work` must only compute (it runs in a copy of the
/// process that is thrown away).
#[cfg(test)]
pub(crate) fn run_isolated(
    work: impl FnOnce() -> Vec<i64>,
    limit: Duration,
) -> Result<Vec<i64>, EhrhartError> {
    let mut work = Some(work);
    let mut replies = run_batch(&[limit], None, |_| Reply {
        words: work.take().map(|w| w()).unwrap_or_default(),
        go_on: true,
    });
    replies.pop().map(|(r, _)| r).unwrap_or_else(|| {
        Err(EhrhartError::PolyLib {
            detail: "no reply".into(),
        })
    })
}

/// Runs `work(k)` for every item `k` of `limits` in forked children with
/// stdout and stderr silenced (one child for all while they succeed; see the
/// module comment) and returns, per item, the words it produced or why there
/// are none, and the time the parent waited for it. Item `k` gets
/// `limits[k]`, counted from when the parent starts waiting for it, and no
/// more than what is left until `deadline`; items whose turn comes after
/// `deadline` get [`EhrhartError::DeadlinePassed`]. `work` must only compute
/// (it runs in a copy of the process that is thrown away).
pub(crate) fn run_batch(
    limits: &[Duration],
    deadline: Option<Instant>,
    mut work: impl FnMut(usize) -> Reply,
) -> Vec<(Result<Vec<i64>, EhrhartError>, Duration)> {
    let n = limits.len();
    let mut out: Vec<(Result<Vec<i64>, EhrhartError>, Duration)> = Vec::with_capacity(n);
    'children: while out.len() < n {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let mut child = match Child::spawn(out.len(), n, &mut work) {
            Ok(c) => c,
            Err(e) => {
                // A fork that fails now fails for the rest too.
                out.resize(n, (Err(e), Duration::ZERO));
                break;
            }
        };
        while out.len() < n {
            let now = Instant::now();
            let Some(limit) = item_limit(limits[out.len()], deadline, now) else {
                break 'children;
            };
            let frame = child.frame(limit);
            let took = now.elapsed();
            match frame {
                Ok(Reply { words, go_on }) => {
                    out.push((Ok(words), took));
                    if !go_on {
                        continue 'children;
                    }
                }
                Err(e) => {
                    out.push((Err(e), took));
                    continue 'children;
                }
            }
        }
    }
    out.resize(n, (Err(EhrhartError::DeadlinePassed), Duration::ZERO));
    out
}

/// An item's time limit from `now`: its own, at most what is left until
/// `deadline`; `None` once the deadline has passed.
fn item_limit(limit: Duration, deadline: Option<Instant>, now: Instant) -> Option<Duration> {
    match deadline {
        Some(d) => {
            let left = d.saturating_duration_since(now);
            (!left.is_zero()).then(|| limit.min(left))
        }
        None => Some(limit),
    }
}

fn sandbox_error(what: &str, e: io::Error) -> EhrhartError {
    EhrhartError::PolyLib {
        detail: format!("{what} to run polylib in: {e}"),
    }
}

/// A child of the sandbox and the read end of its pipe; killed (if still
/// running) and reaped on drop.
struct Child {
    pid: libc::pid_t,
    fd: libc::c_int,
    /// Bytes read and not yet taken as a frame.
    buf: Vec<u8>,
    /// The child's exit status once reaped.
    status: Option<libc::c_int>,
}

impl Child {
    /// Forks a child that works on items `first..n`.
    fn spawn(
        first: usize,
        n: usize,
        work: &mut impl FnMut(usize) -> Reply,
    ) -> Result<Child, EhrhartError> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(sandbox_error(
                "cannot create a pipe",
                io::Error::last_os_error(),
            ));
        }
        let (read_fd, write_fd) = (fds[0], fds[1]);
        let low = LOW_PRIORITY.with(|p| p.get());
        // SAFETY: see the module comment; the child never returns from this block.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: both descriptors are ours.
            unsafe {
                libc::close(read_fd);
                libc::close(write_fd);
            }
            return Err(sandbox_error("cannot fork", e));
        }
        if pid == 0 {
            // SAFETY: in the child; only this thread exists.
            unsafe { child(read_fd, write_fd, first..n, low, work) }
        }
        // SAFETY: the write end belongs to the child now.
        unsafe { libc::close(write_fd) };
        Ok(Child {
            pid,
            fd: read_fd,
            buf: Vec::new(),
            status: None,
        })
    }

    /// The next frame, read within `limit`. After an error the child is of
    /// no further use (the caller drops it, which kills it).
    fn frame(&mut self, limit: Duration) -> Result<Reply, EhrhartError> {
        let deadline = Instant::now() + limit;
        let mut chunk = [0u8; 65536];
        let mut eof = false;
        loop {
            if let Some(frame) = self.take_frame()? {
                return Ok(frame);
            }
            if eof || (self.status.is_some() && !self.readable()) {
                // The child is done or dead before this frame was complete.
                let status = match self.status {
                    Some(s) => s,
                    None => {
                        let s = reap(self.pid);
                        self.status = Some(s);
                        s
                    }
                };
                return Err(judge(status));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(EhrhartError::TimedOut {
                    millis: limit.as_millis() as u64,
                });
            }
            let wait_ms = (deadline - now).as_millis().clamp(1, 100) as libc::c_int;
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: pfd is a valid pollfd.
            let ready = unsafe { libc::poll(&mut pfd, 1, wait_ms) };
            if ready < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(sandbox_error("cannot poll the pipe", e));
            }
            if ready == 0 {
                // Nothing to read: has the child died without closing every copy
                // of the pipe (a process forked meanwhile may hold one)?
                self.status = try_reap(self.pid);
                continue;
            }
            // SAFETY: chunk is a writable buffer of its length.
            let n = unsafe { libc::read(self.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if n < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                eof = true;
            } else if n == 0 {
                eof = true; // end of file: the child is done or dead
            } else {
                self.buf.extend_from_slice(&chunk[..n as usize]);
            }
        }
    }

    /// Whether the pipe has bytes (or its end) to read right now.
    fn readable(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: pfd is a valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 0) > 0 }
    }

    /// Takes a whole frame off the front of `buf`, if there is one.
    fn take_frame(&mut self) -> Result<Option<Reply>, EhrhartError> {
        let Some(head) = self.buf.get(..HEADER_BYTES) else {
            return Ok(None);
        };
        let word =
            |k: usize| u64::from_le_bytes(head[8 * k..8 * k + 8].try_into().unwrap_or([0xff; 8]));
        let (want, go_on) = (word(0), word(1));
        let want = match usize::try_from(want) {
            Ok(w) if w <= MAX_REPLY_WORDS => w,
            _ => {
                return Err(EhrhartError::PolyLib {
                    detail: format!("reply of {want} words is too long"),
                })
            }
        };
        if go_on > 1 {
            return Err(EhrhartError::PolyLib {
                detail: "the polylib process sent a malformed reply".into(),
            });
        }
        let end = HEADER_BYTES + 8 * want;
        if self.buf.len() < end {
            return Ok(None);
        }
        let words = self.buf[HEADER_BYTES..end]
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        self.buf.drain(..end);
        Ok(Some(Reply {
            words,
            go_on: go_on == 1,
        }))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            kill_and_reap(self.pid);
        }
        // SAFETY: the read end is ours.
        unsafe { libc::close(self.fd) };
    }
}

/// The child's side: silence, then per item work and a frame; exit. Never returns.
unsafe fn child(
    read_fd: libc::c_int,
    write_fd: libc::c_int,
    items: std::ops::Range<usize>,
    low_priority: bool,
    work: &mut impl FnMut(usize) -> Reply,
) -> ! {
    libc::close(read_fd);
    if low_priority {
        // Best effort: at worst the child competes at the usual priority.
        libc::setpriority(libc::PRIO_PROCESS, 0, LOW_PRIORITY_NICENESS);
    }
    close_all_but(&[write_fd]);
    quiet();
    for k in items {
        let reply = match catch_unwind(AssertUnwindSafe(|| work(k))) {
            Ok(reply) => reply,
            Err(_) => libc::_exit(CHILD_PANICKED),
        };
        write_frame(write_fd, &reply);
        if !reply.go_on {
            break;
        }
    }
    libc::_exit(0)
}

/// In a child: stdout and stderr to `/dev/null` (or closed).
///
/// # Safety
/// Only in a forked child.
unsafe fn quiet() {
    let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    if devnull >= 0 {
        libc::dup2(devnull, libc::STDOUT_FILENO);
        libc::dup2(devnull, libc::STDERR_FILENO);
        libc::close(devnull);
    } else {
        // Without /dev/null, closing is the next best way to stay quiet.
        libc::close(libc::STDOUT_FILENO);
        libc::close(libc::STDERR_FILENO);
    }
}

/// In a child: writes one reply frame, or exits when the parent is gone.
///
/// # Safety
/// Only in a forked child; `fd` is its reply pipe.
unsafe fn write_frame(fd: libc::c_int, reply: &Reply) {
    let bytes = frame_bytes(&reply.words, reply.go_on);
    if !write_all(&bytes, |b| libc::write(fd, b.as_ptr().cast(), b.len())) {
        libc::_exit(2);
    }
}

/// A frame, both ways: the word count, a flag (a reply's `go_on`, a job's
/// low priority) and the words, little-endian.
fn frame_bytes(words: &[i64], flag: bool) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + 8 * words.len());
    bytes.extend_from_slice(&(words.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&u64::from(flag).to_le_bytes());
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes
}

/// Writes all of `bytes` by `write` (one system call on what is left,
/// returning its result), again where interrupted; `false` on an error.
fn write_all(bytes: &[u8], mut write: impl FnMut(&[u8]) -> isize) -> bool {
    let mut off = 0;
    while off < bytes.len() {
        let n = write(&bytes[off..]);
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        off += n as usize;
    }
    true
}

/// Why a child ended before sending a whole frame.
fn judge(status: libc::c_int) -> EhrhartError {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let why = match sig {
            libc::SIGABRT => " (SIGABRT: polylib aborts on 64-bit arithmetic overflow)",
            libc::SIGSEGV => " (SIGSEGV)",
            _ => "",
        };
        return EhrhartError::PolyLib {
            detail: format!("the polylib process died of signal {sig}{why}"),
        };
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        let code = libc::WEXITSTATUS(status);
        let why = if code == CHILD_PANICKED {
            " (a panic)"
        } else {
            ""
        };
        return EhrhartError::PolyLib {
            detail: format!("the polylib process exited with code {code}{why}"),
        };
    }
    EhrhartError::PolyLib {
        detail: "the polylib process sent a truncated reply".into(),
    }
}

/// Non-blocking reap; `Some(status)` once the child has exited.
fn try_reap(pid: libc::pid_t) -> Option<libc::c_int> {
    let mut status = 0;
    // SAFETY: pid is our child.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (r == pid).then_some(status)
}

/// Blocking reap.
fn reap(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: pid is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        // Reaped elsewhere (or not ours): report it as a truncated reply.
        return 0;
    }
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: pid is our child, not yet reaped.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    reap(pid);
}

/// In a child: closes every descriptor from 3 up but those of `keep`
/// (another batch's pipe, another thread's files); 0, 1 and 2 are replaced
/// next.
///
/// # Safety
/// Only in a forked child, which owns no descriptor anything still uses.
unsafe fn close_all_but(keep: &[libc::c_int]) {
    let close_range = |lo: libc::c_uint, hi: libc::c_uint| -> bool {
        lo > hi || libc::syscall(libc::SYS_close_range, lo, hi, 0) == 0
    };
    let mut kept: Vec<libc::c_uint> = keep.iter().map(|&k| k as libc::c_uint).collect();
    kept.sort_unstable();
    let mut lo: libc::c_uint = 3;
    let mut ranged = true;
    for &k in &kept {
        ranged &= k < lo || close_range(lo, k - 1);
        lo = lo.max(k + 1);
    }
    if ranged && close_range(lo, libc::c_uint::MAX) {
        return;
    }
    // Without close_range (Linux before 5.9): every descriptor the limit allows.
    let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
        n if n > 0 => n.min(1 << 20) as libc::c_int,
        _ => 1024,
    };
    for fd in 3..max {
        if !keep.contains(&fd) {
            libc::close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(20);

    /// Batches from two threads run side by side: a quick one is not held
    /// up by a slow one (there is no lock between them, and neither child
    /// keeps the other's pipe open).
    #[test]
    fn batches_run_side_by_side() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let slow = tx.clone();
            s.spawn(move || {
                let r = run_isolated(
                    || {
                        std::thread::sleep(Duration::from_secs(3));
                        vec![1]
                    },
                    LIMIT,
                );
                slow.send(("slow", r)).unwrap();
            });
            // The slow child is (most likely) running by now; the quick
            // batch finishes first either way unless it waits for it.
            std::thread::sleep(Duration::from_millis(300));
            tx.send(("quick", run_isolated(|| vec![2], LIMIT))).unwrap();
        });
        let order: Vec<_> = rx.iter().take(2).collect();
        assert_eq!(order[0].0, "quick", "{order:?}");
        assert_eq!(order[0].1.as_ref().unwrap(), &vec![2]);
        assert_eq!(order[1].1.as_ref().unwrap(), &vec![1]);
    }

    #[test]
    fn returns_what_the_child_computes() {
        // Larger than a pipe's buffer, so parent and child must interleave.
        let words: Vec<i64> = (0..100_000).map(|k| k * 7 - 3).collect();
        let expected = words.clone();
        assert_eq!(run_isolated(move || words, LIMIT).unwrap(), expected);
        assert_eq!(run_isolated(Vec::new, LIMIT).unwrap(), Vec::<i64>::new());
    }

    #[test]
    fn an_abort_is_an_error() {
        let err = run_isolated(|| unsafe { libc::abort() }, LIMIT).unwrap_err();
        assert!(err.to_string().contains("signal 6 (SIGABRT"), "{err}");
    }

    #[test]
    fn a_panic_is_an_error() {
        let err = run_isolated(|| panic!("boom"), LIMIT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "polylib failed: the polylib process exited with code 101 (a panic)"
        );
    }

    /// The items' words and errors, without the times.
    fn outcomes(
        limits: &[Duration],
        deadline: Option<Instant>,
        work: impl FnMut(usize) -> Reply,
    ) -> Vec<Result<Vec<i64>, String>> {
        run_batch(limits, deadline, work)
            .into_iter()
            .map(|(r, _)| r.map_err(|e| e.to_string()))
            .collect()
    }

    /// A warm child's jobs: `[0, words...]` echoes the words and the
    /// child's pid, `[1]` aborts, `[2]` sleeps a minute, `[3]` answers and
    /// says not to go on.
    fn test_serve(words: &[i64]) -> Reply {
        let pid = unsafe { libc::getpid() } as i64;
        match words.first() {
            Some(1) => unsafe { libc::abort() },
            Some(2) => {
                std::thread::sleep(Duration::from_secs(60));
                Reply {
                    words: Vec::new(),
                    go_on: true,
                }
            }
            Some(3) => Reply {
                words: vec![pid],
                go_on: false,
            },
            _ => Reply {
                words: words[1..].iter().copied().chain([pid]).collect(),
                go_on: true,
            },
        }
    }

    fn no_warm_up() {}

    static TEST_POOL: WarmPool = WarmPool {
        serve: test_serve,
        warm_up: no_warm_up,
        before_fork: no_warm_up,
        free: std::sync::Mutex::new(Vec::new()),
    };

    fn free_children() -> Vec<libc::pid_t> {
        TEST_POOL
            .free
            .lock()
            .unwrap()
            .iter()
            .map(|w| w.child.pid)
            .collect()
    }

    /// Jobs go to the warm child while they succeed; one that fails, times
    /// out or says not to go on costs the warm child (killed and reaped),
    /// and the jobs after it go to a fresh child of their own, with the same
    /// answers.
    #[test]
    fn warm_children_take_jobs_and_are_retired_after_a_failure() {
        TEST_POOL.start(1);
        let warm = free_children();
        assert_eq!(warm.len(), 1);
        let parent = std::process::id() as i64;
        let jobs = |js: &[Vec<i64>], limit: Duration| -> Vec<Result<Vec<i64>, String>> {
            run_jobs(&TEST_POOL, js, &vec![limit; js.len()], None)
                .into_iter()
                .map(|(r, _)| r.map_err(|e| e.to_string()))
                .collect()
        };
        // Larger than a socket's buffer, both ways.
        let big: Vec<i64> = std::iter::once(0).chain(0..100_000).collect();
        let got = jobs(&[vec![0, 7], big.clone(), vec![0, 8]], LIMIT);
        let child = got[0].as_ref().unwrap()[1];
        assert_eq!(child as libc::pid_t, warm[0]);
        assert_ne!(child, parent);
        assert_eq!(got[1].as_ref().unwrap()[..100_000], big[1..]);
        assert_eq!(got[2], Ok(vec![8, child]));
        assert_eq!(free_children(), warm, "a healthy warm child goes back");

        // An abort: the warm child is gone, the next job goes to a fresh child.
        let got = jobs(&[vec![0, 1], vec![1], vec![0, 2]], LIMIT);
        assert_eq!(got[0], Ok(vec![1, child]));
        assert!(got[1].as_ref().unwrap_err().contains("SIGABRT"), "{got:?}");
        let fresh = got[2].as_ref().unwrap()[1];
        assert_ne!(fresh, child);
        let replaced = free_children();
        assert_eq!(replaced.len(), 1, "a retired warm child is replaced");
        assert!(![child, fresh].contains(&(replaced[0] as i64)));
        // SAFETY: probing a pid; the retired child is reaped, so not ours.
        assert_eq!(
            unsafe { libc::waitpid(warm[0], std::ptr::null_mut(), libc::WNOHANG) },
            -1
        );

        // A time-out and a job that says not to go on retire their warm child too.
        let got = jobs(&[vec![2], vec![0, 3]], Duration::from_millis(300));
        assert!(got[0].as_ref().unwrap_err().contains("300 ms"), "{got:?}");
        assert_eq!(got[1].as_ref().unwrap()[0], 3);
        let after = free_children();
        assert_eq!(after.len(), 1);
        assert_ne!(after, replaced);
        let got = jobs(&[vec![3], vec![0, 4]], LIMIT);
        assert_eq!(got[0].as_ref().unwrap()[0], after[0] as i64);
        assert_ne!(got[0].as_ref().unwrap()[0], got[1].as_ref().unwrap()[1]);
        assert_eq!(free_children().len(), 1);
        assert!(run_jobs(&TEST_POOL, &[], &[], None).is_empty());
    }

    #[test]
    fn a_batch_streams_one_reply_per_item_from_one_child() {
        let parent = std::process::id() as i64;
        let got = outcomes(&[LIMIT; 4], None, |k| Reply {
            // Item 2 is larger than a pipe's buffer.
            words: if k == 2 {
                (0..100_000).collect()
            } else {
                vec![k as i64, unsafe { libc::getpid() } as i64]
            },
            go_on: true,
        });
        assert_eq!(got.len(), 4);
        let child = got[0].as_ref().unwrap()[1];
        assert_ne!(child, parent);
        assert_eq!(got[1], Ok(vec![1, child]), "one child for the whole batch");
        assert_eq!(got[2], Ok((0..100_000).collect()));
        assert_eq!(got[3], Ok(vec![3, child]));
        assert!(run_batch(&[], None, |_| unreachable!()).is_empty());
    }

    #[test]
    fn a_failing_item_costs_only_itself() {
        let pid = || unsafe { libc::getpid() } as i64;
        let mut limits = [LIMIT; 7];
        limits[1] = Duration::from_millis(300);
        let got = outcomes(&limits, None, |k| {
            match k {
                1 => std::thread::sleep(Duration::from_secs(30)),
                3 => unsafe { libc::abort() },
                5 => panic!("boom"),
                _ => {}
            }
            // Item 4 asks for a fresh child after it.
            Reply {
                words: vec![k as i64, pid()],
                go_on: k != 4,
            }
        });
        assert_eq!(got[1], Err("polylib took longer than 300 ms".into()));
        assert!(
            got[3].as_ref().unwrap_err().contains("signal 6 (SIGABRT"),
            "{:?}",
            got[3]
        );
        assert_eq!(
            got[5],
            Err("polylib failed: the polylib process exited with code 101 (a panic)".into())
        );
        let ok: Vec<(i64, i64)> = [0, 2, 4, 6]
            .iter()
            .map(|&k| {
                let w = got[k].as_ref().unwrap();
                (w[0], w[1])
            })
            .collect();
        assert_eq!(ok.iter().map(|w| w.0).collect::<Vec<_>>(), [0, 2, 4, 6]);
        // A fresh child after each failure and after item 4.
        let children: std::collections::BTreeSet<i64> = ok.iter().map(|w| w.1).collect();
        assert_eq!(children.len(), 4);
    }

    #[test]
    fn items_after_the_deadline_are_not_attempted() {
        let got = outcomes(
            &[LIMIT; 3],
            Some(Instant::now() + Duration::from_millis(1000)),
            |k| {
                if k == 1 {
                    std::thread::sleep(Duration::from_secs(30));
                }
                Reply {
                    words: vec![k as i64],
                    go_on: true,
                }
            },
        );
        assert_eq!(got[0], Ok(vec![0]));
        assert!(
            got[1]
                .as_ref()
                .is_err_and(|e| e.starts_with("polylib took longer than")),
            "{:?}",
            got[1]
        );
        assert_eq!(
            got[2],
            Err("the time budget was spent before this count began".into())
        );
    }

    #[test]
    fn a_slow_child_is_stopped() {
        let err = run_isolated(
            || {
                std::thread::sleep(Duration::from_secs(30));
                vec![1]
            },
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "polylib took longer than 300 ms");
    }
}
