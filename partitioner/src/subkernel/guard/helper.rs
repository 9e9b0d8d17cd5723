//! Helpers taking guarded buffers ([`Guarder::helper_call`]): the call
//! goes to a clone of the helper ([`helper_clones`], [`clone_text`]) whose
//! accesses through each such parameter are guarded with its kernel
//! parameter's window.

use coarsen::ir::*;

use super::{Access, Guarder};
use crate::subkernel::boxes::box_args;
use crate::subkernel::declarations::{pointee_name, pointee_size, shadowing};
use crate::subkernel::edit::Edit;
use crate::subkernel::source_spans::unsupported_texts;
use crate::subkernel::views::lcm;

impl<'a> Guarder<'a> {
    /// `helper(..., a, ...)`: the call goes to a clone of the helper whose
    /// accesses through that parameter are guarded with the kernel
    /// parameter's window (extra arguments appended to the call).
    pub(super) fn helper_call(&mut self, e: &Expr, f: &str, args: &[Expr], depth: u32) {
        let Some(program) = self.program else {
            return self.fail(e, "passed on from a helper to another function");
        };
        let Some(helper) = program.function(f).filter(|h| !h.is_kernel) else {
            return self.fail(e, &format!("passed to '{f}'"));
        };
        if let Some(d) = shadowing(helper) {
            return self.fail(
                e,
                &format!(
                    "passed to helper '{f}', where variable '{}' at {}:{} shadows its parameter",
                    d.name, d.span.line, d.span.col
                ),
            );
        }
        let positions: Vec<usize> = (0..args.len())
            .filter(|&i| self.param_use(&args[i]).is_some())
            .collect();
        if positions.len() != 1 {
            return self.fail(e, &format!("passed to helper '{f}' twice"));
        }
        let pos = positions[0];
        let Some(hp) = helper.params.get(pos) else {
            return self.fail(
                e,
                &format!("passed to helper '{f}' with more arguments than it takes"),
            );
        };
        let p = self.param_use(&args[pos]).expect("found above");
        let call_text = self.text(&e.span).unwrap_or("");
        if !call_text.starts_with(f)
            || !call_text.ends_with(')')
            || self.text(&p.span).map(str::trim) != Some(self.name)
        {
            return self.fail(
                e,
                &format!("passed to helper '{f}' inside a macro expansion"),
            );
        }
        let mut nested = Guarder {
            helper_calls: Vec::new(),
            boxes: self.boxes.clone(),
            name: &hp.name,
            tag: self.tag,
            program: None,
            buffers: self.buffers,
            pointee: pointee_name(&hp.ty),
            elem_size: pointee_size(&hp.ty),
            views: Vec::new(),
            aliases: Vec::new(),
            stepped: false,
            align: 1,
            viewed: false,
            slot: self.slot,
            src: self.src,
            edits: Vec::new(),
            failure: None,
            handled: Vec::new(),
            group: None,
            conds: Vec::new(),
            seen: Vec::new(),
            both: Vec::new(),
            met_both: Vec::new(),
        };
        if nested.pointee != self.pointee {
            return self.fail(
                e,
                &format!("passed to helper '{f}' as a pointer of another type"),
            );
        }
        let hidden = unsupported_texts(&helper.body, self.src);
        if let Some(why) = nested.guard_body(&helper.body, &hidden, &program.file) {
            return self.fail(e, &format!("passed to helper '{f}', where {why}"));
        }
        self.align = lcm(self.align, nested.align);
        self.viewed |= nested.viewed;
        let t = self.tag;
        let box_params: String = self.boxes.as_ref().map_or(String::new(), |b| {
            box_args(t, b, 0)
                .iter()
                .map(|(n, _)| format!(", long {n}"))
                .collect()
        });
        let box_call: String = self.boxes.as_ref().map_or(String::new(), |b| {
            box_args(t, b, 0)
                .iter()
                .map(|(n, _)| format!(", {n}"))
                .collect()
        });
        if clone_text(self.src, helper, f, "", nested.edits.clone()).is_none() {
            return self.fail(
                e,
                &format!("passed to helper '{f}', whose definition cannot be copied"),
            );
        }
        // the clone is made once every buffer's guard is known: one per
        // helper and set of buffers passed to it ([`helper_clones`])
        self.helper_calls.push(HelperCall {
            call: (e.span.start as usize, e.span.end as usize),
            depth,
            helper: f.to_string(),
            tag: t.to_string(),
            edits: nested.edits,
            params: (window_params(t), box_params),
            args: (
                format!(", __clpart_base_{t}, __clpart_rlo_{t}, __clpart_rhi_{t}, __clpart_wlo_{t}, __clpart_whi_{t}, __clpart_len_{t}"),
                box_call,
            ),
        });
        self.handled.push((p.span.start, p.span.end));
        for (i, a) in args.iter().enumerate() {
            if i != pos {
                self.expr(a, Access::Read, depth + 1);
            }
        }
    }
}

/// A call of a helper that takes the guarded buffer (with other buffers
/// or not): what this buffer's guard adds to the one clone that guards
/// them all ([`helper_clones`]).
pub(in crate::subkernel) struct HelperCall {
    /// The call's span (start, end) in the source.
    pub(in crate::subkernel) call: (usize, usize),
    /// Its nesting depth in the walk (orders its edits among others at
    /// the same position).
    pub(in crate::subkernel) depth: u32,
    pub(in crate::subkernel) helper: String,
    /// The kernel parameter guarded.
    pub(in crate::subkernel) tag: String,
    /// Its accesses in the helper, guarded (absolute source positions).
    pub(in crate::subkernel) edits: Vec<Edit>,
    /// Its window's and its boxes' parameters of the clone, and their
    /// arguments at the call.
    pub(in crate::subkernel) params: (String, String),
    pub(in crate::subkernel) args: (String, String),
}

/// The clones and the call edits of the helper calls taking guarded
/// buffers: per call, one clone of the helper (named after the buffers,
/// made once per helper and set of buffers) whose accesses through each
/// of them are guarded with that buffer's window, and the call renamed to
/// it with every window's arguments appended. `program` holds the
/// helpers; a clone that cannot be made is `Err` with the reason.
pub(in crate::subkernel) fn helper_clones(
    src: &str,
    program: &Program,
    mut calls: Vec<HelperCall>,
) -> Result<(Vec<HelperClone>, Vec<Edit>), String> {
    calls.sort_by(|a, b| a.call.cmp(&b.call).then(a.tag.cmp(&b.tag)));
    let mut clones: Vec<HelperClone> = Vec::new();
    let mut edits = Vec::new();
    for call in calls.chunk_by(|a, b| a.call == b.call) {
        let f = &call[0].helper;
        let helper = program
            .function(f)
            .ok_or_else(|| format!("helper '{f}': not in the program"))?;
        let tags: Vec<&str> = call.iter().map(|c| c.tag.as_str()).collect();
        let name = format!("{f}__clpart_{}", tags.join("_"));
        if !clones.iter().any(|(n, _)| n == &name) {
            let params = extras(call, |c| &c.params, ", ulong *__clpart_badp");
            let extra = &params[2..];
            let nested: Vec<Edit> = call.iter().flat_map(|c| c.edits.iter().cloned()).collect();
            let text = clone_text(src, helper, &name, extra, nested)
                .ok_or_else(|| format!("helper '{f}', whose definition cannot be copied"))?;
            clones.push((name.clone(), text));
        }
        let ((start, end), depth) = (call[0].call, call[0].depth);
        let args = extras(call, |c| &c.args, ", &__clpart_bad");
        edits.push(Edit {
            at: start,
            del: f.len(),
            text: name,
            order: depth,
            fast: None,
        });
        edits.push(Edit {
            at: end - 1,
            del: 0,
            text: args,
            order: 1000 - depth,
            fast: None,
        });
    }
    Ok((clones, edits))
}

/// The parameters (or arguments) a call's clone takes after the helper's
/// own: every buffer's window, the accumulator `bad`, then every buffer's
/// boxes.
fn extras(
    call: &[HelperCall],
    part: impl Fn(&HelperCall) -> &(String, String),
    bad: &str,
) -> String {
    let windows = call.iter().map(|c| part(c).0.as_str());
    let boxes = call.iter().map(|c| part(c).1.as_str());
    windows.chain(std::iter::once(bad)).chain(boxes).collect()
}

/// A helper's guarded clone: its name and text.
pub(in crate::subkernel) type HelperClone = (String, String);

/// A clone's parameters of the window of kernel parameter `tag`.
fn window_params(tag: &str) -> String {
    format!(
        ", long __clpart_base_{tag}, long __clpart_rlo_{tag}, long __clpart_rhi_{tag}, long __clpart_wlo_{tag}, long __clpart_whi_{tag}, long __clpart_len_{tag}"
    )
}

/// The text of helper `h` renamed to `name`, with `edits` (absolute source
/// positions inside its span) applied and the guard's parameters `extra`
/// appended.
fn clone_text(
    src: &str,
    h: &Function,
    name: &str,
    extra: &str,
    mut edits: Vec<Edit>,
) -> Option<String> {
    let (start, end) = (h.span.start as usize, h.span.end as usize);
    let text = src.get(start..end)?;
    // the function name: its first occurrence followed by '('
    let mut at = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(&h.name) {
        let j = from + i;
        let before_ok = j == 0
            || !(text.as_bytes()[j - 1].is_ascii_alphanumeric() || text.as_bytes()[j - 1] == b'_');
        if before_ok && text[j + h.name.len()..].trim_start().starts_with('(') {
            at = Some(j);
            break;
        }
        from = j + 1;
    }
    let at = start + at?;
    edits.push(Edit {
        at,
        del: h.name.len(),
        text: name.to_string(),
        order: 0,
        fast: None,
    });
    let extra = extra.trim_start_matches(", ");
    let last = h.params.last()?;
    edits.push(Edit {
        at: last.span.end as usize,
        del: 0,
        text: format!(", {extra}"),
        order: 0,
        fast: None,
    });
    let mut out = text.to_string();
    edits.sort_by(|a, b| {
        b.at.cmp(&a.at)
            .then(b.del.cmp(&a.del))
            .then(b.order.cmp(&a.order))
    });
    for e in &edits {
        if e.at < start || e.at + e.del > end {
            return None;
        }
        let (a, d) = (e.at - start, e.del);
        out.replace_range(a..a + d, &e.text);
    }
    Some(out)
}
