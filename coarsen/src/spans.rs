//! Where the IR's nodes are in the main file ([`Span`]): a cursor's
//! expansion range, or, for an expression written wholly inside one
//! argument of a macro, where the argument writes it (`MIN(prev[w],
//! prev[tx])`: an edit there reaches every expansion of the argument).

use crate::clang::Cursor;
use crate::ir::Span;

/// A cursor's expansion range.
pub(crate) fn span_of(c: &Cursor) -> Span {
    let e = c.extent();
    Span {
        line: e.line,
        col: e.col,
        start: e.start,
        end: e.end,
    }
}

/// An expression's span: its expansion range, or, for one written wholly
/// inside one argument of a macro (whose expansion range is empty: every
/// token comes from the argument), where the argument writes it when that
/// text stands alone.
pub(crate) fn expr_span(c: &Cursor, source: &str) -> Span {
    let e = c.extent();
    match e.written {
        Some((line, col, start, end))
            if e.end <= e.start
                && source
                    .get(start as usize..end as usize)
                    .is_some_and(stands_alone) =>
        {
            Span {
                line,
                col,
                start,
                end,
            }
        }
        _ => span_of(c),
    }
}

/// Whether `text` (where a macro argument writes an expression) is one
/// argument's text or part of one: brackets balanced and never closing
/// more than they opened, no comma outside them (the one between two
/// arguments), no comment, nothing of a statement, a directive or a
/// literal. A range from one argument into another, or from the macro's
/// name into an argument, fails.
fn stands_alone(text: &str) -> bool {
    if text.contains("/*") || text.contains("//") {
        return false; // a comment could hide a bracket or a comma
    }
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            ',' if depth == 0 => return false,
            ';' | '{' | '}' | '#' | '"' | '\'' => return false,
            _ => {}
        }
    }
    depth == 0 && !text.trim().is_empty()
}
