//! isl objects built from clpart's own values ([`Poly`], [`Cond`]) through
//! isl's API, without printing them and reading the text back: isl's reader
//! takes 60-300 µs for one access relation, building it takes a tenth of
//! that, and the access analysis makes a few dozen per kernel.
//!
//! What the builder cannot express exactly as the text would (a name that
//! is neither a dimension nor a parameter, which isl's reader would make a
//! parameter; a coefficient beyond 64 bits; a non-affine output) makes it
//! answer [`Stop::Text`], and the caller reads the text instead: both ways
//! give the same set (`tests` below compare them).

use super::{Isl, IslFail, IslResult};
use crate::poly::{Atom, Cond, Poly};
use isl_rs::{
    Aff, AffList, BasicSet, DimType, LibISLError, LocalSpace, Map, MultiAff, Set, Space, Val,
};

/// Why an object was not built.
pub(crate) enum Stop {
    /// It needs the text (see the module's documentation).
    Text,
    /// isl failed.
    Isl(IslFail),
}

/// What the builder gives: the object, or [`Stop`].
pub(crate) type Built<T> = Result<T, Stop>;

/// One disjunct of a relation or set: `W[dims] -> name[outs] : cond` (or
/// `W[dims] : cond` for a set).
pub(crate) struct Piece {
    pub(crate) dims: Vec<String>,
    pub(crate) cond: Cond,
    pub(crate) outs: Vec<Poly>,
}

/// An affine expression over named variables (a set's dimensions or its
/// parameters), for the other crates: `sum coefficient * name + constant`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    pub terms: Vec<(String, i64)>,
    pub constant: i64,
}

impl Affine {
    /// `name`
    pub fn var(name: &str) -> Affine {
        Affine {
            terms: vec![(name.to_string(), 1)],
            constant: 0,
        }
    }

    /// `k`
    pub fn konst(k: i64) -> Affine {
        Affine {
            terms: Vec::new(),
            constant: k,
        }
    }

    /// `self + k`
    pub fn offset(mut self, k: i64) -> Affine {
        self.constant += k;
        self
    }

    /// `self + k * other`
    pub fn plus(mut self, k: i64, other: &Affine) -> Affine {
        self.terms
            .extend(other.terms.iter().map(|(n, c)| (n.clone(), c * k)));
        self.constant += k * other.constant;
        self
    }

    fn poly(&self) -> Option<Poly> {
        let mut p = Poly::konst(self.constant as i128);
        for (n, c) in &self.terms {
            p = p.add(&Poly::dim(n).scale(*c as i128)?)?;
        }
        Some(p)
    }
}

/// A constraint on an [`Affine`] ([`Isl::constrained_set`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// `e >= 0`
    AtLeastZero(Affine),
    /// `e = 0`
    Zero(Affine),
    /// `e` is a multiple of the number (`exists k : e = m k`)
    MultipleOf(Affine, u32),
}

impl Constraint {
    fn cond(&self) -> Option<Cond> {
        Some(match self {
            Constraint::AtLeastZero(e) => Cond::Ge(e.poly()?),
            Constraint::Zero(e) => Cond::Eq(e.poly()?),
            Constraint::MultipleOf(e, m) => {
                let e = e.poly()?;
                let q = e.floor_div(*m as i128)?;
                Cond::Eq(e.sub(&q.scale(*m as i128)?)?)
            }
        })
    }
}

/// The names of a space: parameters, then the set's dimensions.
struct Names<'a> {
    params: &'a [String],
    dims: &'a [String],
}

impl Names<'_> {
    /// Where isl's reader finds `name`: a dimension of the tuple first (the
    /// innermost declaration), then a parameter.
    fn find(&self, name: &str) -> Built<(DimType, i32)> {
        if let Some(i) = self.dims.iter().rposition(|d| d == name) {
            return Ok((DimType::In, i as i32));
        }
        match self.params.iter().position(|p| p == name) {
            Some(i) => Ok((DimType::Param, i as i32)),
            None => Err(Stop::Text),
        }
    }
}

impl Isl {
    fn stop(&self, e: LibISLError) -> Stop {
        Stop::Isl(self.fail(e))
    }

    fn val(&self, v: i128) -> Built<Val> {
        let v = i64::try_from(v).map_err(|_| Stop::Text)?;
        Val::int_from_si(self.ctx(), v).map_err(|e| self.stop(e))
    }

    /// The space `[params] -> W[dims]`, or `[params] -> { : }` without dims
    /// and tuple.
    fn set_space(&self, params: &[String], tuple: Option<&str>, dims: &[String]) -> Built<Space> {
        let e = |e| self.stop(e);
        let mut sp = match tuple {
            None if dims.is_empty() => Space::params_alloc(self.ctx(), params.len() as u32),
            _ => Space::set_alloc(self.ctx(), params.len() as u32, dims.len() as u32),
        }
        .map_err(e)?;
        for (i, p) in params.iter().enumerate() {
            sp = sp.set_dim_name(DimType::Param, i as u32, p).map_err(e)?;
        }
        for (i, d) in dims.iter().enumerate() {
            sp = sp.set_dim_name(DimType::Set, i as u32, d).map_err(e)?;
        }
        if let Some(t) = tuple {
            sp = sp.set_tuple_name(DimType::Set, t).map_err(e)?;
        }
        Ok(sp)
    }

    /// `p` as an affine expression on `ls` (a set's local space).
    fn aff(&self, ls: &LocalSpace, names: &Names, p: &Poly) -> Built<Aff> {
        let e = |e| self.stop(e);
        let mut a = Aff::zero_on_domain(ls.copy().map_err(e)?).map_err(e)?;
        for (mono, c) in &p.terms {
            match mono.as_slice() {
                [] => a = a.set_constant_val(self.val(*c)?).map_err(e)?,
                [Atom::Dim(n)] | [Atom::Param(n)] => {
                    let (t, pos) = names.find(n)?;
                    a = a.add_coefficient_val(t, pos, self.val(*c)?).map_err(e)?;
                }
                [Atom::Div(q, d)] => {
                    let d = u32::try_from(*d).map_err(|_| Stop::Text)?;
                    let f = self
                        .aff(ls, names, q)?
                        .scale_down_ui(d)
                        .map_err(e)?
                        .floor()
                        .map_err(e)?
                        .scale_val(self.val(*c)?)
                        .map_err(e)?;
                    a = a.add(f).map_err(e)?;
                }
                _ => return Err(Stop::Text),
            }
        }
        Ok(a)
    }

    /// `c` as a set of `sp` (`ls` its local space). Parts isl cannot express
    /// are the universe when `over`, empty otherwise, as [`Cond::to_isl`].
    fn cond(&self, sp: &Space, ls: &LocalSpace, names: &Names, c: &Cond, over: bool) -> Built<Set> {
        let e = |e| self.stop(e);
        let all = |yes: bool| -> Built<Set> {
            let sp = sp.copy().map_err(e)?;
            if yes {
                Set::universe(sp)
            } else {
                Set::empty(sp)
            }
            .map_err(e)
        };
        match c {
            Cond::True => all(true),
            Cond::False => all(false),
            Cond::Ge(p) | Cond::Eq(p) if p.is_affine() => {
                Set::from_basic_set(self.atom(ls, names, c, p)?).map_err(e)
            }
            Cond::Ge(_) | Cond::Eq(_) | Cond::Unknown(_) => all(over),
            Cond::And(v) => {
                // the affine constraints as one basic set, the rest intersected
                let mut basic: Option<BasicSet> = None;
                let mut rest: Option<Set> = None;
                for x in v {
                    match x {
                        Cond::Ge(p) | Cond::Eq(p) if p.is_affine() => {
                            let b = self.atom(ls, names, x, p)?;
                            basic = Some(match basic {
                                None => b,
                                Some(acc) => acc.intersect(b).map_err(e)?,
                            });
                        }
                        _ => {
                            let s = self.cond(sp, ls, names, x, over)?;
                            rest = Some(match rest {
                                None => s,
                                Some(acc) => acc.intersect(s).map_err(e)?,
                            });
                        }
                    }
                }
                let basic = basic
                    .map(|b| Set::from_basic_set(b).map_err(e))
                    .transpose()?;
                match (basic, rest) {
                    (None, None) => all(true),
                    (Some(s), None) | (None, Some(s)) => Ok(s),
                    (Some(b), Some(r)) => b.intersect(r).map_err(e),
                }
            }
            Cond::Or(v) => {
                let mut out: Option<Set> = None;
                for x in v {
                    let s = self.cond(sp, ls, names, x, over)?;
                    out = Some(match out {
                        None => s,
                        Some(acc) => acc.union(s).map_err(e)?,
                    });
                }
                match out {
                    None => all(false),
                    Some(s) => Ok(s),
                }
            }
            Cond::Not(x) => self.cond(sp, ls, names, x, !over)?.complement().map_err(e),
        }
    }

    /// `p >= 0` or `p = 0` (as `c` is) as a basic set.
    fn atom(&self, ls: &LocalSpace, names: &Names, c: &Cond, p: &Poly) -> Built<BasicSet> {
        let e = |e| self.stop(e);
        let a = self.aff(ls, names, p)?;
        let zero = Aff::zero_on_domain(ls.copy().map_err(e)?).map_err(e)?;
        match c {
            Cond::Eq(_) => a.eq_basic_set(zero),
            _ => a.ge_basic_set(zero),
        }
        .map_err(e)
    }

    /// The space `[params] -> W[dims]` of a piece and its local space.
    fn piece_space(&self, params: &[String], piece: &Piece) -> Built<(Space, LocalSpace)> {
        let e = |e| self.stop(e);
        let sp = self.set_space(params, Some("W"), &piece.dims)?;
        let ls = LocalSpace::from_space(sp.copy().map_err(e)?).map_err(e)?;
        Ok((sp, ls))
    }

    /// The set `[params] -> { W[dims] : cond }` of one piece, in its space.
    fn piece_set(
        &self,
        params: &[String],
        piece: &Piece,
        (sp, ls): &(Space, LocalSpace),
    ) -> Built<Set> {
        let names = Names {
            params,
            dims: &piece.dims,
        };
        self.cond(sp, ls, &names, &piece.cond, true)
    }

    /// `[params] -> { W[dims] -> name[outs] : cond; ... }`, the pieces' union.
    fn relation_built(&self, params: &[String], name: &str, pieces: &[Piece]) -> Built<Map> {
        let e = |e| self.stop(e);
        let mut out: Option<Map> = None;
        for piece in pieces {
            let names = Names {
                params,
                dims: &piece.dims,
            };
            let space = self.piece_space(params, piece)?;
            let dom = self.piece_set(params, piece, &space)?;
            let (sp, ls) = space;
            let mut list = AffList::alloc(self.ctx(), piece.outs.len() as i32).map_err(e)?;
            for o in &piece.outs {
                list = list.add(self.aff(&ls, &names, o)?).map_err(e)?;
            }
            let msp = sp
                .from_domain()
                .map_err(e)?
                .add_dims(DimType::Out, piece.outs.len() as u32)
                .map_err(e)?
                .set_tuple_name(DimType::Out, name)
                .map_err(e)?;
            let m = Map::from_multi_aff(MultiAff::from_aff_list(msp, list).map_err(e)?)
                .map_err(e)?
                .intersect_domain(dom)
                .map_err(e)?;
            out = Some(match out {
                None => m,
                Some(acc) => acc.union(m).map_err(e)?,
            });
        }
        out.ok_or(Stop::Text)
    }

    /// The union of the pieces' sets, `W[dims] : cond` each, or with
    /// `params_only` their parameter sets (`exists (dims : cond)`).
    fn sets_built(&self, params: &[String], pieces: &[Piece], params_only: bool) -> Built<Set> {
        let e = |e| self.stop(e);
        let mut out: Option<Set> = None;
        for piece in pieces {
            let mut s = self.piece_set(params, piece, &self.piece_space(params, piece)?)?;
            if params_only {
                s = s.params().map_err(e)?;
            }
            out = Some(match out {
                None => s,
                Some(acc) => acc.union(s).map_err(e)?,
            });
        }
        out.ok_or(Stop::Text)
    }

    /// The parameter set `[params] -> { : cond }`.
    fn params_built(&self, params: &[String], cond: &Cond) -> Built<Set> {
        let e = |e| self.stop(e);
        let sp = self.set_space(params, None, &[])?;
        let ls = LocalSpace::from_space(sp.copy().map_err(e)?).map_err(e)?;
        self.cond(&sp, &ls, &Names { params, dims: &[] }, cond, true)
    }

    /// The empty relation `[params] -> { W[x0, x1, x2] -> name[o0, ...] :
    /// false }`, kept in the parse cache under that text, which it returns.
    pub(crate) fn empty_relation_text(
        &self,
        params: &[String],
        name: &str,
        n_out: usize,
    ) -> String {
        let outs: Vec<String> = (0..n_out).map(|i| format!("o{i}")).collect();
        let text = format!(
            "{}{{ W[x0, x1, x2] -> {name}[{}] : false }}",
            header(params),
            outs.join(", ")
        );
        if !self.is_kept_map(&text) {
            let dims = ["x0", "x1", "x2"].map(String::from);
            let built = || -> Built<Map> {
                let e = |e| self.stop(e);
                let mut sp = self
                    .set_space(params, Some("W"), &dims)?
                    .from_domain()
                    .map_err(e)?
                    .add_dims(DimType::Out, n_out as u32)
                    .map_err(e)?
                    .set_tuple_name(DimType::Out, name)
                    .map_err(e)?;
                for (i, o) in outs.iter().enumerate() {
                    sp = sp.set_dim_name(DimType::Out, i as u32, o).map_err(e)?;
                }
                Map::empty(sp).map_err(e)
            };
            if let Ok(m) = built() {
                #[cfg(debug_assertions)]
                self.same_as_text(&m, &text);
                self.keep_map(&text, &m);
            }
        }
        text
    }

    /// What was `built`, or where it needs the text, the object `text()`
    /// says, read (in debug builds a built object is compared with it).
    fn built_or_read<T: Readable>(
        &self,
        built: Built<T>,
        text: impl FnOnce() -> String,
    ) -> IslResult<T> {
        match built {
            Ok(x) => {
                #[cfg(debug_assertions)]
                self.same_as_text(&x, &text());
                Ok(x)
            }
            Err(Stop::Isl(f)) => Err(f),
            Err(Stop::Text) => T::parse(self, &text()),
        }
    }

    /// The relation `[params] -> { W[dims] -> name[outs] : cond; ... }` of
    /// `pieces` (at least one), built, or read from its text where it cannot be.
    pub(crate) fn relation(
        &self,
        params: &[String],
        name: &str,
        pieces: &[Piece],
    ) -> IslResult<Map> {
        self.built_or_read(self.relation_built(params, name, pieces), || {
            relation_text(params, name, pieces)
        })
    }

    /// The union of `pieces`' sets `[params] -> { W[dims] : cond }`, or with
    /// `params_only` of their parameter sets; built, or read from its text.
    pub(crate) fn piece_sets(
        &self,
        params: &[String],
        pieces: &[Piece],
        params_only: bool,
    ) -> IslResult<Set> {
        self.built_or_read(self.sets_built(params, pieces, params_only), || {
            sets_text(params, pieces, params_only)
        })
    }

    /// The set `[params] -> { W[dims] : constraints }` (a parameter set
    /// `[params] -> { : constraints }` without dims), built, and kept in the
    /// parse cache under `text`, which says the same set (in debug builds
    /// the two are compared): reading `text` later copies the set.
    pub fn constrained_set(
        &self,
        params: &[String],
        dims: &[String],
        constraints: &[Constraint],
        text: &str,
    ) -> IslResult<Set> {
        if let Some(s) = self.parsed.borrow().sets.get(text) {
            return s.copy().map_err(|e| self.fail(e));
        }
        let cond = constraints
            .iter()
            .map(Constraint::cond)
            .collect::<Option<Vec<Cond>>>()
            .map(|v| v.into_iter().fold(Cond::True, Cond::and));
        let built = match cond {
            None => Err(Stop::Text),
            Some(cond) if dims.is_empty() => self.params_built(params, &cond),
            Some(cond) => self.sets_built(
                params,
                &[Piece {
                    dims: dims.to_vec(),
                    cond,
                    outs: Vec::new(),
                }],
                false,
            ),
        };
        let built = built.inspect(|s| self.keep_set(text, s));
        self.built_or_read(built, || text.to_string())
    }

    /// The parameter set `[params] -> { : cond }`, built, or read from its text.
    pub(crate) fn params_set(&self, params: &[String], cond: &Cond) -> IslResult<Set> {
        self.built_or_read(self.params_built(params, cond), || {
            params_text(params, cond)
        })
    }
}

/// An isl object the builder makes: how its text is read through the parse
/// cache, and (in debug builds) how it is printed, read in another context
/// and compared.
trait Readable: Sized {
    fn parse(isl: &Isl, text: &str) -> IslResult<Self>;
    #[cfg(debug_assertions)]
    fn print(&self) -> Option<String>;
    #[cfg(debug_assertions)]
    fn read(ctx: &isl_rs::Context, text: &str) -> Result<Self, LibISLError>;
    #[cfg(debug_assertions)]
    fn same(&self, other: &Self) -> Result<bool, LibISLError>;
}

impl Readable for Map {
    fn parse(isl: &Isl, text: &str) -> IslResult<Map> {
        isl.map(text)
    }
    #[cfg(debug_assertions)]
    fn print(&self) -> Option<String> {
        // SAFETY: as in `Isl::map_str`.
        unsafe { super::owned_str(super::isl_map_to_str(self.ptr)) }
    }
    #[cfg(debug_assertions)]
    fn read(ctx: &isl_rs::Context, text: &str) -> Result<Map, LibISLError> {
        Map::read_from_str(ctx, text)
    }
    #[cfg(debug_assertions)]
    fn same(&self, other: &Map) -> Result<bool, LibISLError> {
        self.is_equal(other)
    }
}

impl Readable for Set {
    fn parse(isl: &Isl, text: &str) -> IslResult<Set> {
        isl.set(text)
    }
    #[cfg(debug_assertions)]
    fn print(&self) -> Option<String> {
        // SAFETY: as in `Isl::set_str`.
        unsafe { super::owned_str(super::isl_set_to_str(self.ptr)) }
    }
    #[cfg(debug_assertions)]
    fn read(ctx: &isl_rs::Context, text: &str) -> Result<Set, LibISLError> {
        Set::read_from_str(ctx, text)
    }
    #[cfg(debug_assertions)]
    fn same(&self, other: &Set) -> Result<bool, LibISLError> {
        self.is_equal(other)
    }
}

#[cfg(debug_assertions)]
impl Isl {
    /// In debug builds (every test), a built object is compared with its
    /// text read back by isl: they must be the same set or relation. The
    /// comparison runs in a context of its own, so that the analysis'
    /// context (its operation count, its parse cache) is as in a release
    /// build. Where isl fails, nothing is checked.
    fn same_as_text<T: Readable>(&self, built: &T, text: &str) {
        let Some(printed) = self.unlimited(|| built.print()) else {
            return;
        };
        let ctx = isl_rs::Context::alloc();
        let _ = isl_rs::Options::set_on_error(&ctx, super::ON_ERROR_CONTINUE);
        let same =
            T::read(&ctx, &printed).and_then(|b| T::read(&ctx, text).and_then(|t| b.same(&t)));
        if let Ok(same) = same {
            assert!(
                same,
                "a built isl object is not what its text says: {text} (built: {printed})"
            );
        }
    }
}

fn header(params: &[String]) -> String {
    format!("[{}] -> ", params.join(", "))
}

/// The text of [`Isl::relation`].
pub(crate) fn relation_text(params: &[String], name: &str, pieces: &[Piece]) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|p| {
            let outs: Vec<String> = p
                .outs
                .iter()
                .map(|o| o.to_isl().unwrap_or_else(|| "0".into()))
                .collect();
            format!(
                "W[{}] -> {name}[{}] : {}",
                p.dims.join(", "),
                outs.join(", "),
                p.cond.to_isl(true).0
            )
        })
        .collect();
    format!("{}{{ {} }}", header(params), parts.join("; "))
}

/// The text of [`Isl::piece_sets`].
pub(crate) fn sets_text(params: &[String], pieces: &[Piece], params_only: bool) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|p| {
            let (c, _) = p.cond.to_isl(true);
            if params_only {
                format!("exists ({} : {c})", p.dims.join(", "))
            } else {
                format!("W[{}] : {c}", p.dims.join(", "))
            }
        })
        .collect();
    if params_only {
        format!("{}{{ : {} }}", header(params), parts.join(" or "))
    } else {
        format!("{}{{ {} }}", header(params), parts.join("; "))
    }
}

/// The text of [`Isl::params_set`].
pub(crate) fn params_text(params: &[String], cond: &Cond) -> String {
    format!("{}{{ : {} }}", header(params), cond.to_isl(true).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::Why;

    fn ok<T>(b: Built<T>) -> T {
        match b {
            Ok(t) => t,
            Err(Stop::Text) => panic!("not built"),
            Err(Stop::Isl(f)) => panic!("isl failed: {f:?}"),
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn d(n: &str) -> Poly {
        Poly::dim(n)
    }

    fn p(n: &str) -> Poly {
        Poly::param(n)
    }

    fn lin(terms: &[(&Poly, i128)], k: i128) -> Poly {
        let mut out = Poly::konst(k);
        for (t, c) in terms {
            out = out.add(&t.scale(*c).unwrap()).unwrap();
        }
        out
    }

    /// Conditions of every shape the analysis makes: conjunctions,
    /// disjunctions, negations, unknown parts, floor divisions, equalities.
    fn conds() -> Vec<Cond> {
        let (x0, i) = (d("x0"), d("i"));
        let (n, go0) = (p("n"), p("go0"));
        let div = Poly::atom(Atom::Div(Box::new(lin(&[(&x0, 1), (&n, 1)], 3)), 4));
        vec![
            Cond::True,
            Cond::False,
            Cond::And(vec![
                Cond::Ge(lin(&[(&x0, 1), (&go0, -1)], 0)),
                Cond::Ge(lin(&[(&n, 1), (&x0, -1)], -1)),
                Cond::Eq(d("x1")),
            ]),
            Cond::Or(vec![
                Cond::Ge(lin(&[(&i, -1)], -1)),
                Cond::Ge(lin(&[(&i, 1), (&n, -1)], 0)),
            ]),
            Cond::and(
                Cond::Ge(lin(&[(&x0, 1)], 0)),
                Cond::not(Cond::Eq(lin(&[(&div, 2), (&i, -1)], 0))),
            ),
            Cond::and(
                Cond::Ge(lin(&[(&x0, 1)], 0)),
                Cond::Unknown(Why::other("x")),
            ),
            Cond::not(Cond::and(
                Cond::Ge(lin(&[(&x0, 1), (&n, -1)], 0)),
                Cond::Unknown(Why::other("y")),
            )),
            // the same variable as a dimension and a parameter atom
            Cond::Ge(lin(&[(&x0, 1), (&p("x0"), 2), (&n, 1)], 0)),
            Cond::Ge(x0.mul(&n, &[]).unwrap()),
        ]
    }

    #[test]
    fn built_sets_and_relations_are_the_text_read_back() {
        let isl = Isl::new(0);
        let params = names(&["n", "go0"]);
        let dims = names(&["x0", "x1", "x2", "i"]);
        for c in conds() {
            let piece = |c: Cond| Piece {
                dims: dims.clone(),
                cond: c,
                outs: vec![
                    lin(&[(&d("i"), 2), (&d("x0"), 1)], 1),
                    Poly::atom(Atom::Div(Box::new(lin(&[(&d("x0"), 1)], 0)), 2)),
                ],
            };
            let pieces = [piece(c.clone()), piece(Cond::Ge(lin(&[(&d("i"), 1)], -3)))];
            let built = ok(isl.relation_built(&params, "A", &pieces));
            let read = isl.map(&relation_text(&params, "A", &pieces)).unwrap();
            assert!(built.is_equal(&read).unwrap(), "relation of {c:?}");
            for params_only in [false, true] {
                let built = ok(isl.sets_built(&params, &pieces, params_only));
                let read = isl.set(&sets_text(&params, &pieces, params_only)).unwrap();
                assert!(built.is_equal(&read).unwrap(), "set of {c:?}");
            }
            if !c.to_isl(true).0.contains('x') && !c.to_isl(true).0.contains('i') {
                let built = ok(isl.params_built(&params, &c));
                let read = isl.set(&params_text(&params, &c)).unwrap();
                assert!(built.is_equal(&read).unwrap(), "parameter set of {c:?}");
            }
        }
        let c = Cond::Ge(lin(&[(&p("n"), 1), (&p("go0"), -2)], 5));
        let built = ok(isl.params_built(&params, &c));
        assert!(built
            .is_equal(&isl.set(&params_text(&params, &c)).unwrap())
            .unwrap());
    }

    #[test]
    fn a_constrained_set_is_its_text() {
        let isl = Isl::new(0);
        let params = names(&["gs0", "go0", "sx_lo", "sx_hi"]);
        let dims = names(&["x0", "x1", "x2"]);
        let (lo, hi) = (Affine::var("sx_lo"), Affine::var("sx_hi"));
        let x = Affine::var("x0").plus(-1, &Affine::var("go0"));
        let cs = [
            Constraint::AtLeastZero(x.clone().plus(-1, &lo)),
            Constraint::AtLeastZero(hi.clone().plus(-1, &x).offset(-1)),
            Constraint::AtLeastZero(lo.clone()),
            Constraint::AtLeastZero(hi.clone().plus(-1, &lo).offset(-1)),
            Constraint::AtLeastZero(Affine::var("gs0").plus(-1, &hi)),
            Constraint::MultipleOf(lo.clone(), 8),
            Constraint::MultipleOf(hi.clone(), 8),
        ];
        let text = "[gs0, go0, sx_lo, sx_hi] -> { W[x0, x1, x2] : go0 + sx_lo <= x0 < go0 + sx_hi \
                    and 0 <= sx_lo < sx_hi <= gs0 and exists (k_lo, k_hi : sx_lo = 8k_lo and sx_hi = 8k_hi) }";
        let built = isl.constrained_set(&params, &dims, &cs, text).unwrap();
        let read = Set::read_from_str(isl.ctx(), text).unwrap();
        assert!(built.is_equal(&read).unwrap());
        // kept: the text now reads as the built set
        assert!(isl.parsed.borrow().sets.contains_key(text));
        let ptext = "[gs0, go0, sx_lo, sx_hi] -> { : 0 <= sx_lo < sx_hi <= gs0 }";
        let built = isl.constrained_set(&params, &[], &cs[2..5], ptext).unwrap();
        assert!(built
            .is_equal(&Set::read_from_str(isl.ctx(), ptext).unwrap())
            .unwrap());
    }

    #[test]
    fn what_only_the_text_can_say_is_read_from_the_text() {
        let isl = Isl::new(0);
        let params = names(&["n"]);
        let piece = |c: Cond, outs: Vec<Poly>| Piece {
            dims: names(&["x0", "x1", "x2"]),
            cond: c,
            outs,
        };
        // a name that is neither a dimension nor a parameter: the reader
        // refuses it too
        let stray = [piece(Cond::Ge(p("m")), vec![d("x0")])];
        assert!(matches!(
            isl.relation_built(&params, "A", &stray),
            Err(Stop::Text)
        ));
        assert!(isl.relation(&params, "A", &stray).is_err());
        // a coefficient beyond 64 bits
        let huge = [piece(
            Cond::Ge(lin(&[(&d("x0"), 1)], 1i128 << 70)),
            vec![d("x0")],
        )];
        assert!(matches!(
            isl.relation_built(&params, "A", &huge),
            Err(Stop::Text)
        ));
        assert!(isl.relation(&params, "A", &huge).is_ok());
        // a non-affine output
        let sq = [piece(Cond::True, vec![d("x0").mul(&d("x0"), &[]).unwrap()])];
        assert!(matches!(
            isl.relation_built(&params, "A", &sq),
            Err(Stop::Text)
        ));
    }
}
