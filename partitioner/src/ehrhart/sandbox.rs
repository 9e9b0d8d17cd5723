//! Runs PolyLib (and barvinok, module `barvinok`) in a forked child process.
//!
//! PolyLib cannot be trusted to return: its 64-bit build handles arithmetic
//! overflow in `Polyhedron_Enumerate` by printing to stderr and failing an
//! `assert` (SIGABRT), it prints its results on stdout, and it keeps global
//! state. So each PolyLib session runs in a child made by `fork`: the child
//! points its stdout and stderr at `/dev/null`, does the work, writes the
//! encoded result into a pipe and `_exit`s. The parent reads the result with
//! a time limit. An abort, a crash or a time-out in PolyLib becomes an
//! [`EhrhartError`]; the calling process and its output are untouched.
//!
//! The child of a multi-threaded parent runs only the forking thread; it
//! uses malloc (which glibc makes safe after `fork`) and PolyLib, and takes
//! no lock that another thread of the parent could hold.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::EhrhartError;

/// One sandboxed PolyLib session at a time, so that a child never inherits
/// the pipe of another one (which would delay that one's end-of-file).
static SANDBOX_LOCK: Mutex<()> = Mutex::new(());

/// Largest reply accepted from the child (its words, 8 bytes each).
const MAX_REPLY_WORDS: usize = 1 << 24;

/// Exit code of a child whose work panicked.
const CHILD_PANICKED: i32 = 101;

/// Runs `work` in a forked child with stdout and stderr silenced and returns
/// the words it produced. `work` must only compute (it runs in a copy of the
/// process that is thrown away).
pub(crate) fn run_isolated(
    work: impl FnOnce() -> Vec<i64>,
    limit: Duration,
) -> Result<Vec<i64>, EhrhartError> {
    let _guard = SANDBOX_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(sandbox_error(
            "cannot create a pipe",
            io::Error::last_os_error(),
        ));
    }
    let (read_fd, write_fd) = (fds[0], fds[1]);
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
        unsafe { child(read_fd, write_fd, work) }
    }
    // SAFETY: the write end belongs to the child now.
    unsafe { libc::close(write_fd) };
    let reply = read_reply(pid, read_fd, limit);
    // SAFETY: the read end is ours.
    unsafe { libc::close(read_fd) };
    reply
}

fn sandbox_error(what: &str, e: io::Error) -> EhrhartError {
    EhrhartError::PolyLib {
        detail: format!("{what} to run polylib in: {e}"),
    }
}

/// The child's side: silence, work, reply, exit. Never returns.
unsafe fn child(read_fd: libc::c_int, write_fd: libc::c_int, work: impl FnOnce() -> Vec<i64>) -> ! {
    libc::close(read_fd);
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
    let words = match catch_unwind(AssertUnwindSafe(work)) {
        Ok(words) => words,
        Err(_) => libc::_exit(CHILD_PANICKED),
    };
    let mut bytes = Vec::with_capacity(8 * (words.len() + 1));
    bytes.extend_from_slice(&(words.len() as u64).to_le_bytes());
    for w in &words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let mut off = 0;
    while off < bytes.len() {
        let n = libc::write(write_fd, bytes[off..].as_ptr().cast(), bytes.len() - off);
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            libc::_exit(2);
        }
        off += n as usize;
    }
    libc::_exit(0)
}

/// The parent's side: read the reply, reap the child, judge.
fn read_reply(
    pid: libc::pid_t,
    fd: libc::c_int,
    limit: Duration,
) -> Result<Vec<i64>, EhrhartError> {
    let deadline = Instant::now() + limit;
    let mut buf: Vec<u8> = Vec::new();
    let mut status: Option<libc::c_int> = None;
    let mut chunk = [0u8; 65536];
    loop {
        if let Some(want) = expected_len(&buf) {
            if want > MAX_REPLY_WORDS {
                kill_and_reap(pid);
                return Err(EhrhartError::PolyLib {
                    detail: format!("reply of {want} words is too long"),
                });
            }
            if buf.len() >= 8 * (want + 1) {
                break;
            }
        }
        let now = Instant::now();
        if now >= deadline {
            if status.is_none() {
                kill_and_reap(pid);
            }
            return Err(EhrhartError::TimedOut {
                millis: limit.as_millis() as u64,
            });
        }
        let wait_ms = (deadline - now).as_millis().clamp(1, 100) as libc::c_int;
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: pfd is a valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, wait_ms) };
        if ready < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            kill_and_reap(pid);
            return Err(sandbox_error(
                "cannot poll the pipe",
                io::Error::last_os_error(),
            ));
        }
        if ready == 0 {
            // Nothing to read: has the child died without closing every copy
            // of the pipe (a process forked meanwhile may hold one)?
            if status.is_none() {
                status = try_reap(pid);
            }
            if status.is_some() {
                break;
            }
            continue;
        }
        // SAFETY: chunk is a writable buffer of its length.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if n == 0 {
            break; // end of file: the child is done or dead
        }
        buf.extend_from_slice(&chunk[..n as usize]);
    }
    let status = match status {
        Some(s) => s,
        None => reap(pid),
    };
    judge(status, &buf)
}

fn expected_len(buf: &[u8]) -> Option<usize> {
    let head: [u8; 8] = buf.get(..8)?.try_into().ok()?;
    usize::try_from(u64::from_le_bytes(head)).ok()
}

fn judge(status: libc::c_int, buf: &[u8]) -> Result<Vec<i64>, EhrhartError> {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let why = match sig {
            libc::SIGABRT => " (SIGABRT: polylib aborts on 64-bit arithmetic overflow)",
            libc::SIGSEGV => " (SIGSEGV)",
            _ => "",
        };
        return Err(EhrhartError::PolyLib {
            detail: format!("the polylib process died of signal {sig}{why}"),
        });
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        let code = libc::WEXITSTATUS(status);
        let why = if code == CHILD_PANICKED {
            " (a panic)"
        } else {
            ""
        };
        return Err(EhrhartError::PolyLib {
            detail: format!("the polylib process exited with code {code}{why}"),
        });
    }
    let want = expected_len(buf).filter(|&w| buf.len() == 8 * (w + 1));
    let Some(want) = want else {
        return Err(EhrhartError::PolyLib {
            detail: "the polylib process sent a truncated reply".into(),
        });
    };
    Ok(buf[8..]
        .chunks_exact(8)
        .take(want)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(20);

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
