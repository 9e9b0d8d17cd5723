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
//!
//! A command with several outputs writes them as one [`Outputs`] set:
//! every temporary is made before the command runs, and the targets are
//! replaced only once all are written, so an error or a signal leaves every
//! target as it was.

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
/// and FIFOs. One file of an [`Outputs`] set.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut outputs = Outputs::new();
    let id = outputs.reserve(path)?;
    outputs.write(id, write)?;
    outputs.commit().map_err(|e| e.error)
}

/// The target that [`Outputs::commit`] could not finish, and why.
#[derive(Debug)]
pub struct CommitError {
    /// The target.
    pub path: PathBuf,
    /// What failed (syncing, setting the permissions or renaming).
    pub error: io::Error,
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write '{}': {}", self.path.display(), self.error)
    }
}

impl std::error::Error for CommitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// The output files of one command, written all or none.
///
/// Each target is reserved first ([`Outputs::reserve`]): its temporary is
/// created in the target's folder at once, so that a target that cannot be
/// written is found before anything runs. The data then goes to the
/// temporaries ([`Outputs::write`]), and [`Outputs::commit`] syncs them all
/// and only then renames them over their targets. Dropping the set, on an
/// error or an early return, removes every temporary: no target changes.
/// A signal handler removes them through the registry
/// ([`remove_live_temporaries`]). Only a failing rename among several can
/// leave some targets replaced and others not; renames within a folder
/// fail only when the folder itself changes meanwhile.
#[derive(Default)]
pub struct Outputs {
    targets: Vec<Target>,
}

/// A reserved target of an [`Outputs`] set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputId(usize);

struct Target {
    path: PathBuf,
    kind: TargetKind,
    written: bool,
}

enum TargetKind {
    /// A device or FIFO, opened and written in place when written (opening
    /// a FIFO waits for its reader).
    InPlace,
    /// A regular or missing file, replaced by its temporary.
    Replace {
        file: fs::File,
        tmp: Temp,
        /// The permissions of the file replaced, kept.
        mode: Option<u32>,
    },
}

impl Outputs {
    /// An empty set.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Reserves `path`: creates its temporary now (for a regular or missing
    /// target) or checks that it is a device or FIFO. Fails when a file
    /// cannot be made in the target's folder or the target is a folder.
    pub fn reserve(&mut self, path: &Path) -> io::Result<OutputId> {
        let existing = fs::metadata(path).ok();
        let mut mode = None;
        if let Some(m) = &existing {
            let t = m.file_type();
            if t.is_char_device() || t.is_fifo() || t.is_block_device() || t.is_socket() {
                return Ok(self.push(path, TargetKind::InPlace));
            }
            if t.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                ));
            }
            mode = Some(m.permissions().mode() & 0o7777);
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
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp_path)?;
        let tmp = Temp::register(tmp_path);
        Ok(self.push(path, TargetKind::Replace { file, tmp, mode }))
    }

    fn push(&mut self, path: &Path, kind: TargetKind) -> OutputId {
        self.targets.push(Target {
            path: path.to_path_buf(),
            kind,
            written: false,
        });
        OutputId(self.targets.len() - 1)
    }

    /// The target `id` was reserved for.
    pub fn path(&self, id: OutputId) -> &Path {
        &self.targets[id.0].path
    }

    /// Writes the bytes `write` produces to `id`'s temporary (a device or
    /// FIFO: to the target itself).
    pub fn write(
        &mut self,
        id: OutputId,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let target = &mut self.targets[id.0];
        match &mut target.kind {
            TargetKind::InPlace => {
                let mut f = OpenOptions::new().write(true).open(&target.path)?;
                write(&mut f)?;
                f.flush()?;
            }
            TargetKind::Replace { file, .. } => {
                write(file)?;
                hold_for_tests();
                file.flush()?;
            }
        }
        target.written = true;
        Ok(())
    }

    /// Syncs every written temporary, then renames each over its target;
    /// reserved targets never written are left as they were (their
    /// temporaries removed).
    pub fn commit(self) -> Result<(), CommitError> {
        let mut renames = Vec::new();
        for target in self.targets {
            let TargetKind::Replace { file, tmp, mode } = target.kind else {
                continue;
            };
            if !target.written {
                continue;
            }
            let synced = file.sync_all().and_then(|()| match mode {
                Some(mode) => file.set_permissions(fs::Permissions::from_mode(mode)),
                None => Ok(()),
            });
            if let Err(error) = synced {
                return Err(CommitError {
                    path: target.path,
                    error,
                });
            }
            drop(file);
            renames.push((tmp, target.path));
        }
        for (mut tmp, path) in renames {
            if let Err(error) = fs::rename(&tmp.path, &path) {
                return Err(CommitError { path, error });
            }
            tmp.committed = true;
        }
        Ok(())
    }
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
