//! Where things are in the kernel's source text: names and statements
//! found from the IR's byte spans, the `(` and `{` of a kernel, its
//! `return`s, and the constructs the IR does not model or that come from a
//! macro expansion.

use coarsen::ir::*;

/// The spans of the `return` statements of a body.
pub(super) fn collect_returns(body: &[Stmt], out: &mut Vec<Span>) {
    for s in body {
        match s {
            Stmt::Return(_, sp) => out.push(sp.clone()),
            Stmt::If { then, els, .. } => {
                collect_returns(then, out);
                if let Some(e) = els {
                    collect_returns(e, out);
                }
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block(body) => {
                collect_returns(body, out)
            }
            _ => {}
        }
    }
}

/// The source texts of the constructs the IR does not model (unsupported
/// expressions and statements), with their spans.
pub(super) fn unsupported_texts(body: &[Stmt], src: &str) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut add = |sp: &Span| {
        let t = src
            .get(sp.start as usize..sp.end as usize)
            .unwrap_or("")
            .to_string();
        // A span that does not cover the text (macro expansions) hides everything.
        out.push((
            if sp.end <= sp.start {
                String::from("*")
            } else {
                t
            },
            sp.clone(),
        ));
    };
    fn stmts(body: &[Stmt], add: &mut dyn FnMut(&Span)) {
        for s in body {
            match s {
                Stmt::Unsupported(_, sp) => add(sp),
                Stmt::If { then, els, .. } => {
                    stmts(then, add);
                    if let Some(e) = els {
                        stmts(e, add);
                    }
                }
                Stmt::For { init, body, .. } => {
                    if let Some(i) = init {
                        stmts(std::slice::from_ref(&**i), add);
                    }
                    stmts(body, add);
                }
                Stmt::While { body, .. } => stmts(body, add),
                Stmt::Block(b) => stmts(b, add),
                _ => {}
            }
        }
    }
    stmts(body, &mut add);
    visit_exprs(body, &mut |e| {
        if matches!(e.kind, ExprKind::Unsupported(_)) {
            add(&e.span)
        }
    });
    out
}

/// Whether `text` mentions identifier `name` (or is the wildcard `*`).
pub(super) fn mentions(text: &str, name: &str) -> bool {
    if text == "*" {
        return true;
    }
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let end = at + name.len();
        let after = end >= b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if before && after {
            return true;
        }
        from = at + 1;
    }
    false
}

pub(super) fn uses_in_macro(body: &[Stmt], w: WorkItemFn, src: &str) -> bool {
    let mut found = false;
    visit_exprs(body, &mut |e| {
        if let ExprKind::WorkItem(x, _) = &e.kind {
            if *x == w
                && !src
                    .get(e.span.start as usize..e.span.end as usize)
                    .unwrap_or("")
                    .starts_with(w.name())
            {
                found = true;
            }
        }
    });
    found
}

pub(super) fn text_is(src: &str, span: &Span, name: &str) -> bool {
    src.get(span.start as usize..span.end as usize)
        .is_some_and(|t| t.trim() == name)
}

/// The last whole-word mention of `name` in `span`'s text.
pub(super) fn find_name_in_span(src: &str, span: &Span, name: &str) -> Option<usize> {
    let text = src.get(span.start as usize..span.end as usize)?;
    let bytes = text.as_bytes();
    let mut best = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before_ok =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let after = at + name.len();
        let after_ok =
            after >= bytes.len() || !(bytes[after].is_ascii_alphanumeric() || bytes[after] == b'_');
        if before_ok && after_ok {
            best = Some(span.start as usize + at);
        }
        from = at + 1;
    }
    best
}

/// A subscript's pointer and index have texts of their own, in either order
/// (`a[i]`, or `i[a]`, which C reads the same).
pub(super) fn apart(pointer: &Span, index: &Span) -> bool {
    pointer.end <= index.start || index.end <= pointer.start
}

/// Where a statement's text starts.
fn stmt_start(s: &Stmt) -> Option<u32> {
    match s {
        Stmt::Decl(d) => Some(d.span.start),
        Stmt::Expr(e) => Some(e.span.start),
        Stmt::If { span, .. } | Stmt::For { span, .. } | Stmt::While { span, .. } => {
            Some(span.start)
        }
        Stmt::Block(b) => b.first().and_then(stmt_start),
        Stmt::Barrier(span)
        | Stmt::Return(_, span)
        | Stmt::Break(span)
        | Stmt::Continue(span)
        | Stmt::Unsupported(_, span) => Some(span.start),
    }
}

/// Just past the `(` of `k`'s parameter list: after the last mention of
/// its name before its first parameter (or its first statement, or its
/// end), so that the name mentioned again in the body does not count.
pub(super) fn open_paren_after_name(src: &str, k: &Function) -> Option<usize> {
    let text = src.get(k.span.start as usize..k.span.end as usize)?;
    let inside = |&at: &u32| at > k.span.start && at < k.span.end;
    let limit = k
        .params
        .first()
        .map(|p| p.span.start)
        .filter(inside)
        .or_else(|| k.body.first().and_then(stmt_start).filter(inside))
        .unwrap_or(k.span.end);
    let head = Span {
        end: limit,
        ..k.span.clone()
    };
    let at = find_name_in_span(src, &head, &k.name)? - k.span.start as usize;
    text[at..]
        .find('(')
        .map(|i| k.span.start as usize + at + i + 1)
}

pub(super) fn body_open_brace(src: &str, k: &Function) -> Option<usize> {
    // libclang's start of the body, where the text there is its `{`
    let at = k.body_at? as usize;
    (at > k.span.start as usize && src.as_bytes().get(at) == Some(&b'{')).then_some(at)
}

pub(super) fn span_inside(inner: &Span, outer: &Span) -> bool {
    inner.start >= outer.start && inner.end <= outer.end
}

/// Whether the text of `span` is one expansion of a macro defined in `src`
/// whose whole body is a subscript of `name` (`#define SCORE(i, j)
/// score[(i) * cols + (j)]`, or an object-like `#define AT score[k]`),
/// its arguments not mentioning `name`: then `&(EXPANSION) - name` is the
/// subscript's index, and the expansion site can be guarded as a
/// subscript of its own. A macro defined more than once (under
/// conditionals), outside `src` (a header, a `-D` option) or whose body is
/// more than the subscript is not.
pub(super) fn macro_subscript(src: &str, span: &Span, name: &str) -> bool {
    let Some(text) = src.get(span.start as usize..span.end as usize) else {
        return false;
    };
    let ident_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (macro_name, args) = text.split_at(ident_end);
    let args = args.trim();
    if macro_name.is_empty()
        || macro_name.starts_with(|c: char| c.is_ascii_digit())
        || !(args.is_empty() || args.starts_with('(') && closes_at_end(args, '(', ')'))
        || mentions_word(args, name)
    {
        return false;
    }
    let mut bodies = defines(src, macro_name);
    let Some(body) = bodies.next() else {
        return false;
    };
    if bodies.next().is_some() {
        return false;
    }
    // `NAME(params) body` for a function-like macro, `NAME body` otherwise
    let body = match (args.is_empty(), body.strip_prefix('(')) {
        (false, Some(rest)) => match rest.find(')') {
            Some(close) => &rest[close + 1..],
            None => return false,
        },
        (true, None) => body,
        _ => return false,
    };
    let mut body = body.trim();
    while body.starts_with('(') && closes_at_end(body, '(', ')') {
        body = body[1..body.len() - 1].trim();
    }
    match body.strip_prefix(name).map(str::trim_start) {
        Some(rest) => rest.starts_with('[') && closes_at_end(rest, '[', ']'),
        None => false,
    }
}

/// Whether the bracket `open` at the start of `text` is closed by the
/// last character of `text`.
fn closes_at_end(text: &str, open: char, close: char) -> bool {
    let mut depth = 0i32;
    for (at, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return at + c.len_utf8() == text.len();
            }
        }
    }
    false
}

/// Whether `text` mentions the identifier `name` as a whole word.
fn mentions_word(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(name).any(|(at, _)| {
        (at == 0 || !word(b[at - 1])) && b.get(at + name.len()).is_none_or(|&c| !word(c))
    })
}

/// The texts after `#define NAME` of each definition of macro `name` in
/// `src` (continuation lines joined), starting at the parameter list's `(`
/// or after the blank that ends the name.
fn defines<'s>(src: &'s str, name: &'s str) -> impl Iterator<Item = &'s str> + 's {
    let mut lines = src.lines().peekable();
    std::iter::from_fn(move || {
        for line in lines.by_ref() {
            let t = line.trim_start();
            let Some(rest) = t.strip_prefix('#') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix("define") else {
                continue;
            };
            let rest = rest.trim_start();
            let Some(after) = rest.strip_prefix(name) else {
                continue;
            };
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            // (a body continued on the next lines is not followed: such a
            // macro is not guarded)
            if line.trim_end().ends_with('\\') {
                return Some("");
            }
            return Some(after);
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, site: &str, name: &str) -> bool {
        let start = src.rfind(site).expect("the site is in the source") as u32;
        let span = Span {
            line: 0,
            col: 0,
            start,
            end: start + site.len() as u32,
        };
        macro_subscript(src, &span, name)
    }

    #[test]
    fn a_macro_whose_body_is_the_subscript_is_guarded_at_its_site() {
        let src = "#define SCORE(i, j) score[(i) * n + (j)]\n#define C (score[k])\nx = SCORE(a - 1, b) + C;";
        assert!(at(src, "SCORE(a - 1, b)", "score"));
        assert!(at(src, "C", "score"));
        // another buffer's name, or the buffer in the arguments
        assert!(!at(src, "SCORE(a - 1, b)", "other"));
        let src2 = "#define SCORE(i, j) score[(i) * n + (j)]\nx = SCORE(score[0], b);";
        assert!(!at(src2, "SCORE(score[0], b)", "score"));
    }

    #[test]
    fn a_macro_that_is_more_than_the_subscript_is_not() {
        for src in [
            // more than the subscript
            "#define GET(i) (1 + score[i])\nx = GET(k);",
            "#define GET(i) score[i] + score[0]\nx = GET(k);",
            // defined twice (under conditionals)
            "#ifdef A\n#define GET(i) score[i]\n#else\n#define GET(i) score[i + 1]\n#endif\nx = GET(k);",
            // continued on the next line
            "#define GET(i) \\\n score[i]\nx = GET(k);",
        ] {
            assert!(!at(src, "GET(k)", "score"), "{src}");
        }
        // defined elsewhere (a header, a -D option)
        assert!(!at("x = GET(k);", "GET(k)", "score"));
    }
}
