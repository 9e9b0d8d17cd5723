//! Safe output files, for every file clpart writes (range files, `.npy`
//! outputs).
//!
//! A regular file (or a missing one) is replaced atomically: the data goes
//! to a new temporary file in the target's folder, created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` under an unpredictable name (a planted file or
//! symlink is never followed or overwritten), synced, then renamed over the
//! target. Readers see the old file or the new one, never a partial one; on
//! an error the temporary is removed. A target that exists and is not a
//! regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place,
//! never replaced. Live temporaries are listed in a registry so that a
//! signal handler can remove them ([`remove_live_temporaries`]).

use std::fs::{self, OpenOptions};
use std::io::{self, Read as _, Write};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes every temporary file being written right now (for a SIGINT or
/// SIGTERM handler thread, before the process exits). Returns how many were
/// removed.
pub fn remove_live_temporaries() -> usize {
    let live = match LIVE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    live.iter().filter(|p| fs::remove_file(p).is_ok()).count()
}

/// Temporaries in the registry now (tests).
pub fn live_temporaries() -> Vec<PathBuf> {
    match LIVE.lock() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    }
}

/// 128 unpredictable bits as hex: from `/dev/urandom`, else from the
/// randomly keyed std hasher mixed with the time, the pid and a counter.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    let urandom = fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if urandom.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            h.write_u32(std::process::id());
            h.write_usize(i);
            if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
                h.write_u128(t.as_nanos());
            }
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A registered temporary, removed on drop unless committed.
struct Temp {
    path: PathBuf,
    committed: bool,
}

impl Temp {
    fn register(path: PathBuf) -> Temp {
        if let Ok(mut l) = LIVE.lock() {
            l.push(path.clone());
        }
        Temp {
            path,
            committed: false,
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
        if let Ok(mut l) = LIVE.lock() {
            l.retain(|p| p != &self.path);
        }
    }
}

/// Writes the bytes `write` produces to `path` (see the module doc): an
/// atomic replacement for regular or missing targets, in place for devices
/// and FIFOs.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let existing = fs::metadata(path).ok();
    if let Some(m) = &existing {
        let t = m.file_type();
        if t.is_char_device() || t.is_fifo() || t.is_block_device() || t.is_socket() {
            let mut f = OpenOptions::new().write(true).open(path)?;
            write(&mut f)?;
            return f.flush();
        }
        if t.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
    }
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut name = std::ffi::OsString::from(".");
    name.push(file_name);
    name.push(format!(".{}.tmp", random_hex()));
    let tmp_path = dir.join(name);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp_path)?;
    let mut tmp = Temp::register(tmp_path);
    write(&mut f)?;
    hold_for_tests();
    f.flush()?;
    f.sync_all()?;
    if let Some(m) = &existing {
        f.set_permissions(fs::Permissions::from_mode(m.permissions().mode() & 0o7777))?;
    }
    drop(f);
    fs::rename(&tmp.path, path)?;
    tmp.committed = true;
    Ok(())
}

/// Debug builds only: `CLPART_TEST_HOLD_OUTPUT_MS` keeps a written temporary
/// in place that long before it is renamed, so that a test can deliver a
/// signal while an output is being written. Release builds ignore it.
fn hold_for_tests() {
    if cfg!(debug_assertions) {
        if let Some(ms) = std::env::var("CLPART_TEST_HOLD_OUTPUT_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
        }
    }
}
