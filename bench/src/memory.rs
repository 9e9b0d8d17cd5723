//! Item 5: peak host memory (the child's peak resident set, `ru_maxrss`
//! from `wait4`) of `clpart run` on a large `vadd`, against the sum of its
//! argument buffers; and of a tiny `vadd`, the fixed cost (the process,
//! libclang, isl, PoCL and its LLVM).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// One `clpart run` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Peak {
    /// What ran.
    pub case: String,
    /// `POCL_DEVICES`.
    pub devices: String,
    pub n_elements: u64,
    /// Sum of the argument buffers, bytes.
    pub args_bytes: u64,
    /// Peak resident set of the process, bytes.
    pub peak_bytes: u64,
}

/// Runs `clpart run kernels/vadd.cl` with `n` ints per buffer and returns
/// its peak resident set.
pub fn peak(clpart: &Path, root: &Path, n: u64, devices: &str, split: &str) -> Result<Peak> {
    let local = if n.is_multiple_of(256) { 256 } else { 1 };
    let mut child = Command::new(clpart)
        .args([
            "run",
            "kernels/vadd.cl",
            "--global",
            &n.to_string(),
            "--local",
            &local.to_string(),
        ])
        .args([
            "--arg",
            &format!("a=rand:{n}:1"),
            "--arg",
            &format!("b=rand:{n}:2"),
            "--arg",
            &format!("c=zeros:{n}"),
        ])
        .args(["--split", split])
        .env("POCL_DEVICES", devices)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run '{}'", clpart.display()))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; pointers are valid.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r != pid {
        let _ = child.kill();
        bail!(
            "wait4 on clpart run failed: {}",
            std::io::Error::last_os_error()
        );
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("clpart run (vadd, {n} elements, {devices}) failed with status {status}");
    }
    Ok(Peak {
        case: format!("clpart run vadd, 3 x {n} ints, --split {split}"),
        devices: devices.into(),
        n_elements: n,
        args_bytes: 3 * 4 * n,
        peak_bytes: usage.ru_maxrss as u64 * 1024,
    })
}
