//! Textual edits of the kernel's source ([`Edit`]): an insertion or a
//! replacement at a byte position, with its text in the body's fast copy
//! where that differs, applied from the last position back ([`apply`]).

/// Applies `edits` (sorted as in [`rewrite`](super::rewrite)) to `src`, with their fast
/// texts for the fast copy of the body.
pub(super) fn apply(src: &str, edits: &[Edit], fast: bool) -> String {
    let mut out = src.to_string();
    for e in edits {
        if e.at + e.del <= out.len() {
            let text = if fast {
                e.fast.as_deref().unwrap_or(&e.text)
            } else {
                &e.text
            };
            out.replace_range(e.at..e.at + e.del, text);
        }
    }
    out
}

#[derive(Clone)]
pub(super) struct Edit {
    pub(super) at: usize,
    pub(super) del: usize,
    pub(super) text: String,
    /// Among insertions at one position, smaller comes first in the text.
    pub(super) order: u32,
    /// The text in the body's fast copy, when it differs (an access the
    /// per-work-group test proves: its plain rebased index).
    pub(super) fast: Option<String>,
}
