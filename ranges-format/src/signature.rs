//! The signature file: one kernel's argument list ([`ArgInfo`]s, by
//! index) with what it was read from, so that a process that needs only the
//! argument list (the OpenCL layer, reading an application's
//! `clSetKernelArg` values) does not parse the source again. The analysis
//! cache (`session::cache`) keeps one beside its range files.
//!
//! The file is RON: [`SIGNATURE_VERSION`], the source's name, the SHA-256
//! of its text (not the text), the build options, the kernel's name and its
//! arguments, then a SHA-256 of all of these. Reading checks the version,
//! the structure, every field (as a range file's `args`:
//! each argument at its index, a unique identifier, a valid element type
//! and size) and the checksum; like a range file it is untrusted input, and
//! the checksum detects damage and edits, not forgery.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::file::ArgInfo;
use crate::validate::{is_ident, validate_args};
use crate::RangesError;

/// The signature file version this crate writes and reads (no other).
pub const SIGNATURE_VERSION: u32 = 1;

/// One kernel's argument list and what it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureFile {
    /// File name of the kernel source, as given to the parse.
    pub source_name: String,
    /// Lower-case hex SHA-256 of the source text ([`crate::source_hash`]).
    pub source_hash: String,
    /// The clang options of the parse (`-D N=...`).
    pub build_options: Vec<String>,
    /// The kernel's name.
    pub kernel: String,
    /// The kernel's arguments, `args[i].index == i`.
    pub args: Vec<ArgInfo>,
}

/// The file as written and read: the fields of [`SignatureFile`] between
/// the version and the checksum.
#[derive(Serialize, Deserialize)]
#[serde(rename = "SignatureFile", deny_unknown_fields)]
struct OnDisk {
    format_version: u32,
    source_name: String,
    source_hash: String,
    build_options: Vec<String>,
    kernel: String,
    args: Vec<ArgInfo>,
    sha256: String,
}

impl SignatureFile {
    /// Checks the fields: a 64-digit lower-case hex `source_hash`, no nul
    /// byte in the name or the options, a kernel name that is an OpenCL C
    /// identifier, and the argument list as a range file's.
    pub fn validate(&self) -> Result<(), RangesError> {
        let file = |field: &str, message: String| RangesError::File {
            field: field.into(),
            message,
        };
        let hex = self.source_hash.len() == 64
            && self
                .source_hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(file(
                "source_hash",
                format!(
                    "'{}' is not a lower-case hex sha-256",
                    self.source_hash.escape_debug()
                ),
            ));
        }
        if self.source_name.contains('\0') {
            return Err(file("source_name", "contains a nul byte".into()));
        }
        for (i, o) in self.build_options.iter().enumerate() {
            if o.contains('\0') {
                return Err(file(
                    &format!("build_options[{i}]"),
                    "contains a nul byte".into(),
                ));
            }
        }
        if !is_ident(&self.kernel) {
            return Err(file(
                "kernel",
                format!(
                    "'{}' is not an opencl c identifier",
                    self.kernel.escape_debug()
                ),
            ));
        }
        validate_args(&self.args).map_err(|message| RangesError::Invalid {
            kernel: self.kernel.clone(),
            message,
        })
    }

    /// The checksum of every field.
    fn sha256(&self) -> Result<String, RangesError> {
        crate::checksum::digest(&(
            SIGNATURE_VERSION,
            &self.source_name,
            &self.source_hash,
            &self.build_options,
            &self.kernel,
            &self.args,
        ))
    }

    /// Pretty RON text, the checksum last.
    pub fn to_ron_string(&self) -> Result<String, RangesError> {
        let disk = OnDisk {
            format_version: SIGNATURE_VERSION,
            source_name: self.source_name.clone(),
            source_hash: self.source_hash.clone(),
            build_options: self.build_options.clone(),
            kernel: self.kernel.clone(),
            args: self.args.clone(),
            sha256: self.sha256()?,
        };
        let config = ron::ser::PrettyConfig::new().struct_names(true);
        let mut text =
            ron::ser::to_string_pretty(&disk, config).map_err(|e| RangesError::Serialize {
                message: e.to_string().to_lowercase(),
            })?;
        text.push('\n');
        Ok(text)
    }

    /// Parses, validates and verifies a signature file's text.
    pub fn from_ron_str(text: &str) -> Result<SignatureFile, RangesError> {
        let d: OnDisk = ron::from_str(text).map_err(|e| RangesError::Corrupt {
            line: e.span.start.line,
            col: e.span.start.col,
            message: e.code.to_string().to_lowercase(),
        })?;
        if d.format_version != SIGNATURE_VERSION {
            return Err(RangesError::File {
                field: "format_version".into(),
                message: format!(
                    "signature file version {} is not {SIGNATURE_VERSION}",
                    d.format_version
                ),
            });
        }
        let sig = SignatureFile {
            source_name: d.source_name,
            source_hash: d.source_hash,
            build_options: d.build_options,
            kernel: d.kernel,
            args: d.args,
        };
        sig.validate()?;
        if sig.sha256()? != d.sha256 {
            return Err(RangesError::File {
                field: "sha256".into(),
                message: "checksum mismatch (the file was edited after clpart wrote it)".into(),
            });
        }
        Ok(sig)
    }

    /// Reads, validates and verifies the signature file at `path`. The
    /// errors are the range file's ([`RangesError`]; the analysis cache
    /// shows none of them: it ignores such a file).
    pub fn read(path: impl AsRef<Path>) -> Result<SignatureFile, RangesError> {
        let path = path.as_ref();
        let text = crate::input::read_text(path, crate::input::CACHE_FILE).map_err(|error| {
            RangesError::Io {
                op: "read",
                path: path.to_path_buf(),
                error,
            }
        })?;
        SignatureFile::from_ron_str(&text)
    }

    /// Validates, then writes atomically (as [`crate::RangeFile::write_atomic`]).
    pub fn write_atomic(&self, path: impl AsRef<Path>) -> Result<(), RangesError> {
        self.validate()?;
        let text = self.to_ron_string()?;
        let path = path.as_ref();
        crate::output::write_file(path, |w| w.write_all(text.as_bytes())).map_err(|error| {
            RangesError::Io {
                op: "write",
                path: path.to_path_buf(),
                error,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgKind;

    fn sample() -> SignatureFile {
        SignatureFile {
            source_name: "vadd.cl".into(),
            source_hash: crate::source_hash("kernel void vadd() {}"),
            build_options: vec!["-DN=4".into()],
            kernel: "vadd".into(),
            args: vec![
                ArgInfo {
                    index: 0,
                    name: "a".into(),
                    kind: ArgKind::GlobalBuffer,
                    elem_type: "float".into(),
                    elem_size: 4,
                    fields: Vec::new(),
                },
                ArgInfo {
                    index: 1,
                    name: "n".into(),
                    kind: ArgKind::Scalar,
                    elem_type: "uint".into(),
                    elem_size: 4,
                    fields: Vec::new(),
                },
            ],
        }
    }

    #[test]
    fn a_written_signature_reads_back() {
        let s = sample();
        let text = s.to_ron_string().unwrap();
        assert_eq!(SignatureFile::from_ron_str(&text).unwrap(), s);
        let dir = std::env::temp_dir().join(format!("clpart-sig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.args.ron");
        s.write_atomic(&path).unwrap();
        assert_eq!(SignatureFile::read(&path).unwrap(), s);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Damage, edits, another version and inconsistent fields are refused
    /// with the reason, never a panic.
    #[test]
    fn damaged_edited_or_inconsistent_files_are_refused() {
        let text = sample().to_ron_string().unwrap();
        let err = |t: &str| SignatureFile::from_ron_str(t).unwrap_err().to_string();
        assert!(err(&text[..text.len() / 2]).starts_with("corrupt range file"));
        assert!(err("").starts_with("corrupt range file"));
        assert!(err(&text.replace("\"n\"", "\"m\"")).contains("checksum mismatch"));
        assert!(err(&text.replace("format_version: 1", "format_version: 2"))
            .contains("signature file version 2 is not 1"));
        let mut s = sample();
        s.args[1].index = 3;
        assert!(s.validate().unwrap_err().to_string().contains("index 3"));
        let mut s = sample();
        s.args[1].elem_size = 2;
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("elem_size 2"));
        let mut s = sample();
        s.source_hash = "x".into();
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("source_hash"));
        let mut s = sample();
        s.kernel = "not a name".into();
        assert!(s.write_atomic("/nonexistent/k.args.ron").is_err());
        // A range file is not a signature file.
        let rf = crate::RangeFile::new("vadd.cl", "kernel void vadd() {}");
        assert!(SignatureFile::from_ron_str(&rf.to_ron_string().unwrap()).is_err());
    }
}
