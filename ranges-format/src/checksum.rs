//! Per-section checksums of a range file: a SHA-256 of each section's
//! compact RON form, stored in the file and verified on load, so that an
//! edit after `clpart analyze -o` wrote the file is refused with the name of
//! the section that changed. They detect edits and damage, not forgery:
//! anyone can recompute them, so a range file is trusted like a program.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::file::{KernelRanges, RangeFile};
use crate::RangesError;

/// One section's digest as stored in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "Checksum")]
pub(crate) struct SectionChecksum {
    /// `source`, `kernel 'k'`, `kernel 'k': params`, `kernel 'k': array 'a'`, ...
    pub(crate) section: String,
    /// Lower-case hex SHA-256 of the section's compact RON.
    pub(crate) sha256: String,
}

/// Lower-case hex SHA-256 of `value`'s compact RON (also the signature
/// file's checksum, `crate::signature`).
pub(crate) fn digest<T: Serialize + ?Sized>(value: &T) -> Result<String, RangesError> {
    let text = ron::to_string(value).map_err(|e| RangesError::Serialize {
        message: e.to_string().to_lowercase(),
    })?;
    let d = Sha256::digest(text.as_bytes());
    Ok(d.iter().map(|b| format!("{b:02x}")).collect())
}

fn kernel_sections(k: &KernelRanges, out: &mut Vec<SectionChecksum>) -> Result<(), RangesError> {
    let base = format!("kernel '{}'", k.name);
    let mut push = |section: String, sha256: String| out.push(SectionChecksum { section, sha256 });
    push(
        base.clone(),
        digest(&(
            &k.name,
            k.work_dim,
            k.split_dim,
            k.splittable,
            &k.reason,
            &k.diagnostics,
        ))?,
    );
    push(format!("{base}: params"), digest(&k.params)?);
    push(format!("{base}: args"), digest(&k.args)?);
    for a in &k.arrays {
        push(format!("{base}: array '{}'", a.name), digest(a)?);
    }
    push(format!("{base}: assumptions"), digest(&k.assumptions)?);
    push(format!("{base}: subkernel"), digest(&k.subkernel)?);
    // a section only where there is one: files written before the field
    // existed keep their checksums
    if let Some(g) = &k.group_size_use {
        push(format!("{base}: group size use"), digest(g)?);
    }
    if !k.cut_short.is_empty() {
        push(format!("{base}: cut short"), digest(&k.cut_short)?);
    }
    Ok(())
}

/// The checksums of every section of `f`, in file order.
pub(crate) fn sections(f: &RangeFile) -> Result<Vec<SectionChecksum>, RangesError> {
    let mut out = vec![SectionChecksum {
        section: "source".into(),
        sha256: digest(&(&f.source_name, &f.source_hash, &f.source, &f.build_options))?,
    }];
    for k in &f.kernels {
        kernel_sections(k, &mut out)?;
    }
    Ok(out)
}

/// Checks the stored checksums against the content; the error names the
/// first section that differs, lacks a checksum or is unknown. Sections are
/// compared in file order, one to one, so two sections of the same name
/// (arrays of an inconsistent file) are each checked against their own
/// digest.
pub(crate) fn verify(f: &RangeFile, stored: &[SectionChecksum]) -> Result<(), RangesError> {
    let want = sections(f)?;
    let err = |section: &str, message: &str| RangesError::Checksum {
        section: section.to_string(),
        message: message.to_string(),
    };
    for i in 0..want.len().max(stored.len()) {
        match (want.get(i), stored.get(i)) {
            (Some(w), Some(s)) if s.section != w.section => {
                return Err(err(
                    &w.section,
                    "no checksum (the file was edited or damaged)",
                ))
            }
            (Some(w), None) => {
                return Err(err(
                    &w.section,
                    "no checksum (the file was edited or damaged)",
                ))
            }
            (Some(w), Some(s)) if s.sha256 != w.sha256 => {
                return Err(err(
                    &w.section,
                    "checksum mismatch (the file was edited after clpart wrote it)",
                ))
            }
            (None, Some(s)) => {
                return Err(err(
                    &s.section,
                    "checksum of a section the file does not have (the file was edited)",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
