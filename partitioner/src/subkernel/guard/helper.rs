//! Helpers taking a guarded buffer ([`Guarder::helper_call`]): the call
//! goes to a clone of the helper ([`clone_text`]) whose accesses through
//! that parameter are guarded with the kernel parameter's window.

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
        // another buffer passed as a pointer (a value read from one, `b[i]`,
        // is an access its own guard checks)
        let others = args.iter().enumerate().any(|(i, a)| {
            let mut any = false;
            if !positions.contains(&i) && matches!(a.ty, Type::Pointer { .. } | Type::Array { .. })
            {
                visit_expr(a, &mut |x| {
                    any |= matches!(&x.kind, ExprKind::Var(m) if self.buffers.contains(m))
                });
            }
            any
        });
        if positions.len() != 1 || others {
            return self.fail(
                e,
                &format!("passed to helper '{f}' together with other buffers"),
            );
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
            boxes: self.boxes.clone(),
            name: &hp.name,
            tag: self.tag,
            program: None,
            buffers: self.buffers,
            clones: Vec::new(),
            pointee: pointee_name(&hp.ty),
            elem_size: pointee_size(&hp.ty),
            views: Vec::new(),
            align: 1,
            viewed: false,
            slot: self.slot,
            src: self.src,
            edits: Vec::new(),
            failure: None,
            handled: Vec::new(),
            group: None,
            conds: Vec::new(),
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
        let clone_name = format!("{f}__clpart_{}", self.tag);
        if !self.clones.iter().any(|(n, _)| n == &clone_name) {
            let box_params = self.boxes.as_ref().map_or(String::new(), |b| {
                box_args(self.tag, b, 0)
                    .iter()
                    .map(|(n, _)| format!(", long {n}"))
                    .collect()
            });
            let Some(text) = clone_text(
                self.src,
                helper,
                &clone_name,
                self.tag,
                &box_params,
                nested.edits,
            ) else {
                return self.fail(
                    e,
                    &format!("passed to helper '{f}', whose definition cannot be copied"),
                );
            };
            self.clones.push((clone_name.clone(), text));
        }
        self.handled.push((p.span.start, p.span.end));
        let t = self.tag;
        self.edits.push(Edit {
            at: e.span.start as usize,
            del: f.len(),
            text: clone_name,
            order: depth,
            fast: None,
        });
        self.edits.push(Edit {
            at: e.span.end as usize - 1,
            del: 0,
            text: format!(
                ", __clpart_base_{t}, __clpart_rlo_{t}, __clpart_rhi_{t}, __clpart_wlo_{t}, __clpart_whi_{t}, __clpart_len_{t}, &__clpart_bad{}",
                self.boxes.as_ref().map_or(String::new(), |b| box_args(t, b, 0).iter().map(|(n, _)| format!(", {n}")).collect())
            ),
            order: 1000 - depth,
            fast: None,
        });
        for (i, a) in args.iter().enumerate() {
            if i != pos {
                self.expr(a, Access::Read, depth + 1);
            }
        }
    }
}

/// The text of helper `h` renamed to `name`, with `edits` (absolute source
/// positions inside its span) applied and the guard's parameters for `tag`
/// appended.
fn clone_text(
    src: &str,
    h: &Function,
    name: &str,
    tag: &str,
    box_params: &str,
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
    let extra = format!(
        "long __clpart_base_{tag}, long __clpart_rlo_{tag}, long __clpart_rhi_{tag}, long __clpart_wlo_{tag}, long __clpart_whi_{tag}, long __clpart_len_{tag}, ulong *__clpart_badp{box_params}"
    );
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
