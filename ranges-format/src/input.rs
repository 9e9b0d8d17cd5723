//! Bounded input files, for every file clpart reads (kernel sources, run
//! files, range files, `.npy` data).
//!
//! A file is opened without blocking (a FIFO with no writer does not hang
//! the open) and must be a regular file: `/dev/zero`, a FIFO or a terminal
//! would otherwise be read until memory runs out. Its bytes are read
//! through [`Read::take`] with one byte more than the limit, so a file that
//! grows while it is read, or whose size the metadata misstates, is still
//! found out as too large; nothing past the limit is ever held.
//!
//! The errors are [`io::Error`]s whose text names the problem but not the
//! path (the callers add the path, as they do for every other I/O error):
//! `not a regular file`, `larger than 16 MiB, the most a kernel source may
//! have`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The most bytes a kind of input file may have, and what the kind is
/// called in the error that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The most bytes.
    pub bytes: u64,
    /// The kind of file, as the error names it ("a kernel source").
    pub what: &'static str,
}

/// Kernel sources and run files: 16 MiB, far above any real kernel (the
/// largest of the corpus is a few KiB) and small enough for libclang.
pub const SOURCE: Limit = Limit {
    bytes: 16 << 20,
    what: "a kernel source",
};

/// Range files and analysis requests: 64 MiB (they carry the kernel source
/// and its ranges).
pub const RANGE_FILE: Limit = Limit {
    bytes: 64 << 20,
    what: "a range file",
};

/// Files clpart writes for itself (signature files of the analysis cache):
/// 16 MiB.
pub const CACHE_FILE: Limit = Limit {
    bytes: 16 << 20,
    what: "a cache file",
};

/// `.npy` data files: half the host's memory, at least 1 GiB (4 GiB when
/// the memory size is unknown). A buffer is also bounded by the device's
/// largest allocation; this bound only keeps a read from exhausting the host.
pub fn data_file() -> Limit {
    // SAFETY: sysconf has no preconditions; it returns -1 on failure.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let bytes = if pages > 0 && page > 0 {
        ((pages as u64).saturating_mul(page as u64) / 2).max(1 << 30)
    } else {
        4 << 30
    };
    Limit {
        bytes,
        what: "a data file (half the host's memory)",
    }
}

/// `bytes` in the largest binary unit that keeps it short (`16 MiB`,
/// `1.5 GiB`, `512 B`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The error for more than `limit` bytes.
pub fn too_large(limit: Limit) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "larger than {}, the most {} may have",
            human_bytes(limit.bytes),
            limit.what
        ),
    )
}

/// Opens `path` for reading if it is a regular file (see the module doc).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(f)
}

/// Reads all of `r`, refusing more than `limit` bytes.
pub fn read_to_limit(r: impl Read, limit: Limit) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.take(limit.bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.bytes {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// Reads the regular file at `path`, at most `limit` bytes.
pub fn read(path: &Path, limit: Limit) -> io::Result<Vec<u8>> {
    let f = open_regular(path)?;
    // refuse early what the metadata already shows too large
    if f.metadata()?.len() > limit.bytes {
        return Err(too_large(limit));
    }
    read_to_limit(f, limit)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, limit: Limit) -> io::Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TINY: Limit = Limit {
        bytes: 8,
        what: "a test file",
    };

    #[test]
    fn a_device_file_is_refused_without_reading_it() {
        let e = read(Path::new("/dev/zero"), SOURCE).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file");
    }

    #[test]
    fn a_file_one_byte_over_the_limit_is_refused_and_one_at_it_is_read() {
        let dir = std::env::temp_dir().join(format!("clpart-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let at = dir.join("at");
        let over = dir.join("over");
        std::fs::File::create(&at)
            .unwrap()
            .write_all(&[1; 8])
            .unwrap();
        std::fs::File::create(&over)
            .unwrap()
            .write_all(&[1; 9])
            .unwrap();
        assert_eq!(read(&at, TINY).unwrap().len(), 8);
        let e = read(&over, TINY).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 8 B, the most a test file may have"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_endless_stream_stops_one_byte_past_the_limit() {
        let e = read_to_limit(io::repeat(0), TINY).unwrap_err();
        assert!(e.to_string().starts_with("larger than 8 B"), "{e}");
    }

    #[test]
    fn sizes_are_named_in_binary_units() {
        assert_eq!(human_bytes(16 << 20), "16 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(100), "100 B");
    }
}
