//! nom parsers for isl's textual piecewise quasi-affine expressions and
//! conditions, extended with the quasi-polynomial forms of PolyLib's Ehrhart
//! output (rational coefficients, powers, products, periodic numbers).
//!
//! Grammar (whitespace between tokens is free):
//!
//! ```text
//! pw       := [header] '{' [piece (';' piece)*] '}' | sum
//! header   := '[' [ident (',' ident)*] ']' '->'
//! piece    := ['[' ']' '->'] '[' sum ']' [':' cond]
//! condtext := [header] '{' ':' [cond] '}' | cond | <empty>
//! cond     := conj ('or' conj)*
//! conj     := catom ('and' catom)*
//! catom    := 'true' | 'false' | exists | chain | '(' cond ')'
//! exists   := 'exists' '(' evar (',' evar)* ':' cond ')'
//! evar     := ident ['=' sum]
//! chain    := sum (cmp sum)+          cmp := '<=' | '<' | '>=' | '>' | '=' | '==' | '!='
//! sum      := term (('+' | '-') term)*
//! term     := unary (('*' unary) | ('/' uint) | <after a literal:> power)*
//! unary    := '-'* power
//! power    := postfix ['^' uint]
//! postfix  := atom (('mod' | '%') uint)*
//! atom     := '(' sum ')' | 'floor' '(' sum ')' | 'ceil' '(' sum ')'
//!           | 'floord' '(' sum ',' uint ')' | 'ceild' '(' sum ',' uint ')'
//!           | ('min' | 'max') '(' sum (',' sum)* ')'
//!           | '[' sum (',' sum)* ']' '_' ident | uint | ident
//! ```
//!
//! `16hi` is `16 * hi` (implicit multiplication after an integer literal, as
//! isl prints it); `mod` binds to the factor before it, as in isl's reader.

use std::borrow::Cow;

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while};
use nom::character::complete::{digit1, multispace0, satisfy};
use nom::combinator::{cut, not, opt, peek, recognize};
use nom::error::{ErrorKind, ParseError};
use nom::multi::{many0, many0_count, separated_list0, separated_list1};
use nom::sequence::{delimited, pair, preceded, terminated};
use nom::{IResult, Parser};

use crate::ast::{AddOp, CmpOp, Cond, ExVar, Exists, Expr, MulOp, Piece, Var};
use crate::ExprError;

/// Deepest bracket nesting accepted; keeps parser and evaluator recursion
/// far from the stack limit.
const MAX_NESTING: usize = 64;

/// Largest exponent of `^`.
const MAX_POWER: u32 = 64;

/// Words that are not identifiers.
const KEYWORDS: &[&str] = &[
    "and", "or", "mod", "exists", "floor", "ceil", "floord", "ceild", "min", "max", "true",
    "false", "not", "NaN", "infty",
];

/// The parse error: where, and what was expected there.
#[derive(Debug)]
pub(crate) struct PErr<'a> {
    input: &'a str,
    msg: Cow<'static, str>,
}

impl<'a> PErr<'a> {
    fn at(input: &'a str, msg: impl Into<Cow<'static, str>>) -> nom::Err<PErr<'a>> {
        nom::Err::Failure(PErr {
            input,
            msg: msg.into(),
        })
    }
}

impl<'a> ParseError<&'a str> for PErr<'a> {
    fn from_error_kind(input: &'a str, kind: ErrorKind) -> Self {
        let msg = match kind {
            ErrorKind::Eof => "unexpected trailing text",
            ErrorKind::Digit => "expected an integer",
            _ => "unexpected text",
        };
        PErr {
            input,
            msg: Cow::Borrowed(msg),
        }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }

    /// Keeps the error that got furthest into the text.
    fn or(self, other: Self) -> Self {
        if other.input.len() <= self.input.len() {
            other
        } else {
            self
        }
    }
}

type Res<'a, T> = IResult<&'a str, T, PErr<'a>>;

/// Relabels an error raised exactly at the (whitespace-trimmed) start.
fn expecting<'a, T>(
    what: &'static str,
    mut p: impl Parser<&'a str, Output = T, Error = PErr<'a>>,
) -> impl FnMut(&'a str) -> Res<'a, T> {
    move |i: &'a str| match p.parse(i) {
        Err(nom::Err::Error(mut e)) => {
            if e.input.len() >= i.trim_start().len() {
                e.msg = Cow::Borrowed(what);
            }
            Err(nom::Err::Error(e))
        }
        other => other,
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

/// A punctuation token after optional whitespace.
fn sym<'a>(s: &'static str) -> impl FnMut(&'a str) -> Res<'a, &'a str> {
    move |i: &'a str| {
        preceded(multispace0, tag(s)).parse(i).map_err(|e| {
            e.map(|mut pe: PErr<'a>| {
                pe.msg = Cow::Owned(format!("expected '{s}'"));
                pe
            })
        })
    }
}

/// A keyword, not followed by an identifier character.
fn kw<'a>(k: &'static str) -> impl FnMut(&'a str) -> Res<'a, &'a str> {
    move |i: &'a str| {
        preceded(multispace0, terminated(tag(k), not(satisfy(is_ident_char))))
            .parse(i)
            .map_err(|e| {
                e.map(|mut pe: PErr<'a>| {
                    pe.msg = Cow::Owned(format!("expected '{k}'"));
                    pe
                })
            })
    }
}

/// An identifier (never a keyword).
fn ident(i: &str) -> Res<'_, &str> {
    let (rest, name) = expecting(
        "expected a name",
        preceded(
            multispace0,
            recognize(pair(satisfy(is_ident_start), take_while(is_ident_char))),
        ),
    )(i)?;
    if KEYWORDS.contains(&name) {
        return Err(nom::Err::Error(PErr {
            input: i.trim_start(),
            msg: Cow::Owned(format!("expected a name, found keyword '{name}'")),
        }));
    }
    Ok((rest, name))
}

/// An unsigned integer literal.
fn uint(i: &str) -> Res<'_, i128> {
    let (rest, digits) = expecting("expected an integer", preceded(multispace0, digit1))(i)?;
    match digits.parse::<i128>() {
        Ok(v) => Ok((rest, v)),
        Err(_) => Err(PErr::at(i.trim_start(), "integer literal too large")),
    }
}

/// A positive integer constant (a divisor or modulus).
fn posint(i: &str) -> Res<'_, i128> {
    let (rest, v) = uint(i)?;
    if v == 0 {
        return Err(PErr::at(
            i.trim_start(),
            "divisor or modulus must be positive",
        ));
    }
    Ok((rest, v))
}

fn sum(i: &str) -> Res<'_, Expr> {
    let (i, first) = term(i)?;
    let (i, rest) = many0(pair(
        alt((
            sym("+").map(|_| AddOp::Add),
            terminated(sym("-"), not(tag(">"))).map(|_| AddOp::Sub),
        )),
        cut(term),
    ))
    .parse(i)?;
    if rest.is_empty() {
        Ok((i, first))
    } else {
        Ok((i, Expr::Sum(Box::new(first), rest)))
    }
}

/// Start of a factor that may follow an integer literal without `*`.
fn implicit_start(i: &str) -> Res<'_, ()> {
    peek(alt((
        sym("(").map(|_| ()),
        ident.map(|_| ()),
        alt((
            kw("floor"),
            kw("ceil"),
            kw("floord"),
            kw("ceild"),
            kw("min"),
            kw("max"),
        ))
        .map(|_| ()),
    )))
    .parse(i)
}

fn term(i: &str) -> Res<'_, Expr> {
    let (mut i, first) = unary(i)?;
    let mut last_is_literal = matches!(first, Expr::Int(_));
    let mut ops = Vec::new();
    loop {
        if let Ok((r, _)) = sym("*")(i) {
            let (r, t) = cut(unary).parse(r)?;
            last_is_literal = matches!(t, Expr::Int(_));
            ops.push(MulOp::Mul(t));
            i = r;
        } else if let Ok((r, _)) = sym("/")(i) {
            let (r, k) = cut(posint).parse(r)?;
            last_is_literal = false;
            ops.push(MulOp::Div(k));
            i = r;
        } else if last_is_literal && implicit_start(i).is_ok() {
            let (r, t) = power(i)?;
            last_is_literal = false;
            ops.push(MulOp::Mul(t));
            i = r;
        } else {
            break;
        }
    }
    if ops.is_empty() {
        Ok((i, first))
    } else {
        Ok((i, Expr::Prod(Box::new(first), ops)))
    }
}

fn unary(i: &str) -> Res<'_, Expr> {
    let (i, n_minus) = many0_count(terminated(sym("-"), not(tag(">")))).parse(i)?;
    let (i, e) = power(i)?;
    if n_minus % 2 == 0 {
        return Ok((i, e));
    }
    Ok((
        i,
        match e {
            // A negative literal is one token, as in isl's `-1 + N`.
            Expr::Int(v) => Expr::Int(-v),
            other => Expr::Neg(Box::new(other)),
        },
    ))
}

fn power(i: &str) -> Res<'_, Expr> {
    let (i, base) = postfix(i)?;
    let (rest, exp) = opt(preceded(sym("^"), cut(uint))).parse(i)?;
    match exp {
        None => Ok((rest, base)),
        Some(k) if k <= MAX_POWER as i128 => Ok((rest, Expr::Pow(Box::new(base), k as u32))),
        Some(_) => Err(PErr::at(
            i.trim_start(),
            format!("exponent larger than {MAX_POWER}"),
        )),
    }
}

fn postfix(i: &str) -> Res<'_, Expr> {
    let (i, base) = atom(i)?;
    let (i, ms) = many0(preceded(alt((kw("mod"), sym("%"))), cut(posint))).parse(i)?;
    if ms.is_empty() {
        Ok((i, base))
    } else {
        Ok((i, Expr::Mod(Box::new(base), ms)))
    }
}

fn args(i: &str) -> Res<'_, Vec<Expr>> {
    delimited(sym("("), separated_list1(sym(","), sum), sym(")")).parse(i)
}

fn atom(i: &str) -> Res<'_, Expr> {
    if kw("NaN")(i).is_ok() {
        return Err(PErr::at(i.trim_start(), "isl's NaN is not supported"));
    }
    expecting(
        "expected an expression",
        alt((
            delimited(sym("("), sum, sym(")")),
            preceded(kw("floor"), cut(delimited(sym("("), sum, sym(")"))))
                .map(|e| Expr::Floor(Box::new(e))),
            preceded(kw("ceil"), cut(delimited(sym("("), sum, sym(")"))))
                .map(|e| Expr::Ceil(Box::new(e))),
            preceded(
                kw("floord"),
                cut(delimited(
                    sym("("),
                    pair(terminated(sum, sym(",")), posint),
                    sym(")"),
                )),
            )
            .map(|(e, k)| Expr::Floor(Box::new(Expr::Prod(Box::new(e), vec![MulOp::Div(k)])))),
            preceded(
                kw("ceild"),
                cut(delimited(
                    sym("("),
                    pair(terminated(sum, sym(",")), posint),
                    sym(")"),
                )),
            )
            .map(|(e, k)| Expr::Ceil(Box::new(Expr::Prod(Box::new(e), vec![MulOp::Div(k)])))),
            preceded(kw("min"), cut(args)).map(Expr::Min),
            preceded(kw("max"), cut(args)).map(Expr::Max),
            pair(
                delimited(sym("["), separated_list1(sym(","), sum), sym("]")),
                preceded(sym("_"), ident),
            )
            .map(|(items, v)| Expr::Periodic(Var::Name(v.to_string()), items)),
            uint.map(Expr::Int),
            ident.map(|n| Expr::Var(Var::Name(n.to_string()))),
        )),
    )(i)
}

fn cmp_op(i: &str) -> Res<'_, CmpOp> {
    expecting(
        "expected a comparison",
        alt((
            sym("<=").map(|_| CmpOp::Le),
            sym(">=").map(|_| CmpOp::Ge),
            sym("!=").map(|_| CmpOp::Ne),
            sym("==").map(|_| CmpOp::Eq),
            sym("<").map(|_| CmpOp::Lt),
            sym(">").map(|_| CmpOp::Gt),
            sym("=").map(|_| CmpOp::Eq),
        )),
    )(i)
}

fn chain(i: &str) -> Res<'_, Cond> {
    let (i, first) = sum(i)?;
    let (i, rest) = nom::multi::many1(pair(cmp_op, cut(sum))).parse(i)?;
    Ok((i, Cond::Chain(first, rest)))
}

fn evar(i: &str) -> Res<'_, ExVar> {
    let (i, name) = ident(i)?;
    let (i, def) = opt(preceded(terminated(sym("="), not(tag("="))), sum)).parse(i)?;
    Ok((
        i,
        ExVar {
            name: name.to_string(),
            slot: 0,
            def,
            solve: Vec::new(),
        },
    ))
}

fn exists(i: &str) -> Res<'_, Cond> {
    let (i, _) = kw("exists")(i)?;
    let (i, (vars, body)) = cut(delimited(
        sym("("),
        pair(terminated(separated_list1(sym(","), evar), sym(":")), cond),
        sym(")"),
    ))
    .parse(i)?;
    Ok((i, Cond::Exists(Box::new(Exists { vars, body }))))
}

fn catom(i: &str) -> Res<'_, Cond> {
    expecting(
        "expected a condition",
        alt((
            kw("true").map(|_| Cond::True),
            kw("false").map(|_| Cond::False),
            exists,
            chain,
            delimited(sym("("), cond, sym(")")),
        )),
    )(i)
}

fn conj(i: &str) -> Res<'_, Cond> {
    let (i, first) = catom(i)?;
    let (i, mut rest) = many0(preceded(kw("and"), cut(catom))).parse(i)?;
    if rest.is_empty() {
        return Ok((i, first));
    }
    rest.insert(0, first);
    Ok((i, Cond::And(rest)))
}

pub(crate) fn cond(i: &str) -> Res<'_, Cond> {
    let (i, first) = conj(i)?;
    let (i, mut rest) = many0(preceded(kw("or"), cut(conj))).parse(i)?;
    if rest.is_empty() {
        return Ok((i, first));
    }
    rest.insert(0, first);
    Ok((i, Cond::Or(rest)))
}

fn header(i: &str) -> Res<'_, Vec<String>> {
    let (i, names) = terminated(
        delimited(sym("["), separated_list0(sym(","), ident), sym("]")),
        sym("->"),
    )
    .parse(i)?;
    Ok((i, names.into_iter().map(str::to_string).collect()))
}

fn piece(i: &str) -> Res<'_, Piece> {
    let (i, _) = opt((sym("["), sym("]"), sym("->"))).parse(i)?;
    let (i, value) = preceded(sym("["), cut(terminated(sum, sym("]")))).parse(i)?;
    let (i, c) = opt(preceded(sym(":"), cut(cond))).parse(i)?;
    Ok((
        i,
        Piece {
            value,
            cond: c.unwrap_or(Cond::True),
        },
    ))
}

type PwParts = (Option<Vec<String>>, Vec<Piece>);

fn pw_braced(i: &str) -> Res<'_, PwParts> {
    let (i, h) = opt(header).parse(i)?;
    let (i, pieces) = delimited(sym("{"), separated_list0(sym(";"), piece), sym("}")).parse(i)?;
    Ok((i, (h, pieces)))
}

fn pw_bare(i: &str) -> Res<'_, PwParts> {
    let (i, value) = sum(i)?;
    Ok((
        i,
        (
            None,
            vec![Piece {
                value,
                cond: Cond::True,
            }],
        ),
    ))
}

type CondParts = (Option<Vec<String>>, Cond);

fn cond_braced(i: &str) -> Res<'_, CondParts> {
    let (i, h) = opt(header).parse(i)?;
    let (i, c) = delimited(pair(sym("{"), sym(":")), opt(cond), sym("}")).parse(i)?;
    Ok((i, (h, c.unwrap_or(Cond::True))))
}

fn cond_bare(i: &str) -> Res<'_, CondParts> {
    cond.map(|c| (None, c)).parse(i)
}

/// Turns a nom outcome on the whole text into a value or a positioned error.
fn finish<'a, T>(text: &'a str, r: Res<'a, T>) -> Result<T, ExprError> {
    let fail = |e: PErr<'a>| {
        let offset = text.len() - e.input.len();
        let near: String = e.input.chars().take(16).collect();
        let near = if near.is_empty() {
            "end of text".to_string()
        } else {
            format!("'{near}'")
        };
        ExprError::Parse {
            col: offset + 1,
            message: format!("{} near {near}", e.msg),
        }
    };
    match r {
        Ok((rest, v)) => {
            let rest_trimmed = rest.trim_start();
            if rest_trimmed.is_empty() {
                Ok(v)
            } else {
                Err(fail(PErr {
                    input: rest_trimmed,
                    msg: Cow::Borrowed("unexpected trailing text"),
                }))
            }
        }
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(fail(e)),
        Err(nom::Err::Incomplete(_)) => Err(ExprError::Parse {
            col: text.len() + 1,
            message: "unexpected end of text".into(),
        }),
    }
}

fn check_nesting(text: &str) -> Result<(), ExprError> {
    let mut depth = 0usize;
    for (pos, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(ExprError::Parse {
                        col: pos + 1,
                        message: format!("brackets nested deeper than {MAX_NESTING}"),
                    });
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Parses a piecewise expression text.
pub(crate) fn parse_pw(text: &str) -> Result<PwParts, ExprError> {
    check_nesting(text)?;
    let r = alt((
        terminated(pw_braced, peek(trailing_end)),
        terminated(pw_bare, peek(trailing_end)),
    ))
    .parse(text);
    finish(text, r)
}

/// Parses a condition text; an empty text is `true`.
pub(crate) fn parse_cond(text: &str) -> Result<CondParts, ExprError> {
    check_nesting(text)?;
    if text.trim().is_empty() {
        return Ok((None, Cond::True));
    }
    let r = alt((
        terminated(cond_braced, peek(trailing_end)),
        terminated(cond_bare, peek(trailing_end)),
    ))
    .parse(text);
    finish(text, r)
}

/// Succeeds at the end of the text (after whitespace).
fn trailing_end(i: &str) -> Res<'_, ()> {
    let (i, _) = multispace0(i)?;
    if i.is_empty() {
        Ok((i, ()))
    } else {
        Err(nom::Err::Error(PErr {
            input: i,
            msg: Cow::Borrowed("unexpected trailing text"),
        }))
    }
}
