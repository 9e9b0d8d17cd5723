//! The kernel with its body in two copies ([`versioned`]): the fast copy,
//! where the accesses the per-work-group test proves use their plain
//! rebased index, and the checked copy; the prologue's test picks one per
//! work-group.

use coarsen::ir::*;

use super::declarations::visit_decls;
use super::edit::{apply, Edit};
use super::group;
use super::source_spans::{body_open_brace, unsupported_texts};

const BODY_BEGIN: &str = "/*@clpart body@*/";

const BODY_END: &str = "/*@clpart end@*/";

/// The kernel with its body in two copies (module [`group`]): the prologue's
/// per-work-group test picks the fast copy, where the proven accesses use
/// their plain rebased index, or the checked one. `None` when no access is
/// proven, or when the body's `__local` declarations cannot be moved in
/// front of the copies (they must stay at kernel scope).
pub(super) fn versioned(
    src: &str,
    k: &Function,
    edits: &mut Vec<Edit>,
    group: &group::GroupCheck<'_>,
) -> Option<String> {
    // a copy of an unmodeled construct may not be valid twice (a label)
    if group.proven == 0 || !unsupported_texts(&k.body, src).is_empty() {
        return None;
    }
    let open = body_open_brace(src, k)?;
    let close = k.span.end as usize - 1;
    if src.as_bytes().get(close) != Some(&b'}') {
        return None;
    }
    // `__local` declarations: only at the top of the body, one per statement
    let mut hoisted = String::new();
    let mut moves = Vec::new();
    let mut nested_local = false;
    visit_decls(&k.body, 0, &mut |d, depth| {
        if d.space == AddrSpace::Local {
            if depth > 0 {
                nested_local = true;
                return;
            }
            let rest = src.get(d.span.end as usize..).unwrap_or("");
            match rest.find(';') {
                Some(semi) if rest[..semi].trim().is_empty() => {
                    let end = d.span.end as usize + semi + 1;
                    hoisted.push_str(&format!("    {}\n", &src[d.span.start as usize..end]));
                    moves.push(Edit {
                        at: d.span.start as usize,
                        del: end - d.span.start as usize,
                        text: String::new(),
                        order: 0,
                        fast: None,
                    });
                }
                _ => nested_local = true,
            }
        }
    });
    if nested_local {
        return None;
    }
    let mut all: Vec<Edit> = std::mem::take(edits);
    all.extend(moves);
    all.push(Edit {
        at: open + 1,
        del: 0,
        text: BODY_BEGIN.into(),
        order: 0,
        fast: None,
    });
    all.push(Edit {
        at: close,
        del: 0,
        text: BODY_END.into(),
        order: u32::MAX,
        fast: None,
    });
    all.sort_by(|a, b| {
        b.at.cmp(&a.at)
            .then(b.del.cmp(&a.del))
            .then(b.order.cmp(&a.order))
    });
    *edits = all;
    let checked = apply(src, edits, false);
    let fast = apply(src, edits, true);
    let body = |t: &str| -> Option<(usize, usize)> {
        let b = t.find(BODY_BEGIN)?;
        let e = t.rfind(BODY_END)?;
        (b < e).then_some((b, e))
    };
    let (cb, ce) = body(&checked)?;
    let (fb, fe) = body(&fast)?;
    let checked_body = &checked[cb + BODY_BEGIN.len()..ce];
    let fast_body = &fast[fb + BODY_BEGIN.len()..fe];
    Some(format!(
        "{}\n{hoisted}#ifndef CLPART_UNCHECKED\n    /* one test per work-group: every access below that the prologue bounds stays in its window */\n{}    if (__clpart_fast) {{\n#endif\n{fast_body}\n#ifndef CLPART_UNCHECKED\n    }} else {{\n{checked_body}\n    }}\n#endif\n{}",
        &checked[..cb],
        group.prologue(),
        &checked[ce + BODY_END.len()..]
    ))
}
