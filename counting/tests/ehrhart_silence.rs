//! PolyLib prints on stdout (and on stderr when it fails) by itself, and
//! aborts on arithmetic overflow; `enumerate` must keep the process's output
//! clean and the process alive. A test binary of its own: it captures the
//! process's fds 1 and 2.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd};

use counting::{enumerate, EhrhartError};

/// Runs `f` with fd `target` pointed at an in-memory file; returns what was written.
fn capture_fd<T>(target: i32, f: impl FnOnce() -> T) -> (T, String) {
    let mut file = unsafe {
        let fd = libc::memfd_create(c"capture".as_ptr(), 0);
        assert!(fd >= 0);
        File::from_raw_fd(fd)
    };
    std::io::stdout().flush().unwrap();
    let saved = unsafe { libc::dup(target) };
    assert!(saved >= 0);
    assert!(unsafe { libc::dup2(file.as_raw_fd(), target) } >= 0);
    let result = f();
    std::io::stdout().flush().unwrap();
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved, target);
        libc::close(saved);
    }
    let mut out = String::new();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.read_to_string(&mut out).unwrap();
    (result, out)
}

#[test]
fn enumerate_keeps_stdout_and_stderr_clean() {
    let ((ok, overflow), out) = capture_fd(1, || {
        capture_fd(2, || {
            let ok = enumerate("[N] -> { [i, j] : 0 <= j <= i < N }", None);
            // Large coefficients overflow PolyLib's 64-bit arithmetic, on
            // which Polyhedron_Enumerate prints to stderr and aborts.
            let aborts = enumerate(
                "[N] -> { [i, j] : 0 <= 1000000 i <= N and 0 <= j <= 999999 i + N }",
                None,
            );
            // ... or throws an overflow exception that the C shim catches.
            let throws = enumerate(
                "[N] -> { [i, j, k] : 0 <= 1000000007 i <= N and 0 <= 1000003 j <= 999999 i + N \
                 and 0 <= 99991 k <= 77777 j + 55555 i }",
                None,
            );
            (ok, (aborts, throws))
        })
    });
    let ((ok, overflow), err) = (ok, overflow);
    assert_eq!(out, "", "polylib output leaked onto stdout");
    assert_eq!(err, "", "polylib output leaked onto stderr");
    assert_eq!(ok.unwrap().eval(&[4]).unwrap(), 10);
    let (aborts, throws) = overflow;
    let e = aborts.unwrap_err();
    assert!(matches!(e, EhrhartError::PolyLib { .. }), "{e}");
    assert!(e.to_string().contains("SIGABRT"), "{e}");
    let e = throws.unwrap_err();
    assert_eq!(
        e.to_string(),
        "polylib failed: Polyhedron_Enumerate threw an exception (arithmetic overflow?)"
    );
}
