//! The files a command writes (`--out`, `--svg`, `-o`), all or none: a
//! [`ranges_format::output::Outputs`] set whose errors name the target.
//! Every target is reserved before the command runs anything, so one that
//! cannot be written stops the command at once, and none is replaced until
//! all are written.

use anyhow::{Context, Result};
use ranges_format::output::{OutputId, Outputs};
use std::io::Write;
use std::path::Path;

#[derive(Default)]
pub struct OutputFiles {
    set: Outputs,
}

impl OutputFiles {
    /// Makes `path`'s temporary now; `what` names the option (`--out`).
    pub fn reserve(&mut self, path: &Path, what: &str) -> Result<OutputId> {
        self.set
            .reserve(path)
            .with_context(|| format!("{what}: cannot write '{}'", path.display()))
    }

    /// Writes the bytes `write` produces to `id`'s temporary.
    pub fn write(
        &mut self,
        id: OutputId,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let path = self.set.path(id).to_path_buf();
        self.set
            .write(id, write)
            .with_context(|| format!("cannot write '{}'", path.display()))
    }

    /// Replaces every written target (see [`Outputs::commit`]).
    pub fn commit(self) -> Result<()> {
        Ok(self.set.commit()?)
    }
}
