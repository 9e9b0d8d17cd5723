//! The run-time guard's C text, written at the head of the subkernel: the
//! window checks and the flag flush ([`GUARD_HEADER`]), the checks of views
//! ([`VIEW_FNS`]), and the box checks of arrays with boxes, with and
//! without read parts ([`BOX_BIN`], [`box_header`]).

/// The guard's checks (see the module doc). `__clpart_r`/`__clpart_w`/
/// `__clpart_rw` check one element, `__clpart_rn`/`__clpart_wn` `n`
/// consecutive ones (vloadN/vstoreN); each returns the index to use.
pub(super) const GUARD_HEADER: &str = r#"#ifdef CLPART_UNCHECKED
#define __clpart_r(i, lo, hi, len, bad, s) (i)
#define __clpart_w(i, lo, hi, len, bad, s) (i)
#define __clpart_rw(i, rlo, rhi, wlo, whi, len, bad, s) (i)
#define __clpart_rn(i, n, lo, hi, len, bad, s) (i)
#define __clpart_wn(i, n, lo, hi, len, bad, s) (i)
#define __clpart_flush(bad, f)
#else
/* Branch-free: a refused index goes to the sink (len) and sets the slot's
   bits in the work-item's private accumulator (1: outside the buffer,
   2: inside it but outside the window), flushed to the flag buffer once
   when the work-item ends. */
long __clpart_chk(long i, long n, long lo, long hi, long len, ulong *bad, int s) {
    int ok = (i >= lo) & (i <= hi - n);
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}
#define __clpart_r(i, lo, hi, len, bad, s) __clpart_chk((i), 1, (lo), (hi), (len), (bad), (s))
#define __clpart_w(i, lo, hi, len, bad, s) __clpart_chk((i), 1, (lo), (hi), (len), (bad), (s))
#define __clpart_rn(i, n, lo, hi, len, bad, s) __clpart_chk((i), (n), (lo), (hi), (len), (bad), (s))
#define __clpart_wn(i, n, lo, hi, len, bad, s) __clpart_chk((i), (n), (lo), (hi), (len), (bad), (s))
long __clpart_rw(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s) {
    return __clpart_chk(i, 1, rlo > wlo ? rlo : wlo, rhi < whi ? rhi : whi, len, bad, s);
}
void __clpart_flush(ulong bad, __global int *f) {
    if (bad) {
        atomic_or((volatile __global int *)f, (int)(uint)bad);
        atomic_or((volatile __global int *)f + 1, (int)(uint)(bad >> 32));
    }
}
/* The per-work-group test's arithmetic: exact, or *ok cleared on overflow. */
long __clpart_gadd(long a, long b, int *ok) {
    long s = (long)((ulong)a + (ulong)b);
    *ok &= ((a ^ s) & (b ^ s)) >= 0;
    return s;
}
long __clpart_gsub(long a, long b, int *ok) {
    long s = (long)((ulong)a - (ulong)b);
    *ok &= ((a ^ b) & (a ^ s)) >= 0;
    return s;
}
long __clpart_gmul(long a, long b, int *ok) {
    long p = (long)((ulong)a * (ulong)b);
    *ok &= mul_hi(a, b) == (p >> 63);
    return p;
}
#endif
"#;

/// The checks of views ([`View`](super::views::View)): `__clpart_valign` turns a
/// checked index of the first of `m` elements into the wider view's,
/// `__clpart_vsub` checks a narrower view's element against the element
/// holding it.
pub(super) const VIEW_FNS: &str = r#"#ifdef CLPART_UNCHECKED
#define __clpart_valign(i, m, len, bad, s) ((i) / (m))
#define __clpart_vsub(e, m, lo, hi, len, bad, s, b) ((e) - (m) * (b))
#else
/* A view of elements m times wider: the checked index i (the
   first of m elements, or len when refused) in the view's elements; a
   buffer whose first element is not at a multiple of m cannot be viewed
   (bit 2). */
long __clpart_valign(long i, long m, long len, ulong *bad, int s) {
    int ok = (i % m) == 0;
    *bad |= (ok ? 0UL : 2UL) << (2 * s);
    return ok ? i / m : (len + m - 1) / m;
}
/* A view of elements m times narrower: view element e is part of element
   floor(e / m), checked; the result in the view's elements. */
long __clpart_vsub(long e, long m, long lo, long hi, long len, ulong *bad, int s, long b) {
    long r = ((e % m) + m) % m;
    return __clpart_chk((e - r) / m - b, 1, lo, hi, len, bad, s) * m + r;
}
#endif
"#;

/// The box check of one dimension: 1 when the component of
/// absolute element index `a` in a dimension of stride `st` and extent `ex`,
/// `(a / st) % ex`, lies in `[lo, hi]` (with the `n - 1` elements after it,
/// in the dimension of stride 1), or when the launch checks no box (`st`
/// is 0). Never divides by zero.
pub(super) const BOX_BIN: &str = r#"#ifndef CLPART_UNCHECKED
int __clpart_bin(long a, long n, long st, long ex, long lo, long hi) {
    long c = (a / (st > 0 ? st : 1L)) % (ex > 0 ? ex : 1L);
    return (st == 0) | ((c >= lo) & (c + (st == 1 ? n - 1 : 0L) <= hi));
}
#endif
"#;

/// The box check functions for `m` checked dimensions (see the module doc):
/// `__clpart_bchk<m>` (one access of `n` elements) and `__clpart_brw<m>`
/// (a read-modify-write: both windows and both boxes); with `parts` read
/// parts, `__clpart_bchkp<m>_<parts>` and
/// `__clpart_brwp<m>_<parts>`, whose read must also lie in some part (its
/// linear window and its bounds in every dimension `k >= 1`) when the
/// launch checks boxes.
pub(super) fn box_header(m: usize, parts: usize) -> String {
    if parts > 0 {
        return box_parts_header(m, parts);
    }
    let BoxLists {
        one,
        one_decl,
        rw,
        rw_decl,
        both,
        inside,
    } = BoxLists::new(m, "", "");
    let mut out = String::new();
    out.push_str(&format!(
        "#ifdef CLPART_UNCHECKED
#define __clpart_bchk{m}(i, n, lo, hi, len, bad, s, b{one}) (i)
#define __clpart_brw{m}(i, rlo, rhi, wlo, whi, len, bad, s, b{rw}) (i)
#else
"
    ));
    out.push_str(&format!(
        "long __clpart_bchk{m}(long i, long n, long lo, long hi, long len, ulong *bad, int s, long b{one_decl}) {{
    long a = (long)((ulong)i + (ulong)b);
    int ok = (i >= lo) & (i <= hi - n){inside};
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}}
long __clpart_brw{m}(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s, long b{rw_decl}) {{
    return __clpart_bchk{m}(i, 1, max(rlo, wlo), min(rhi, whi), len, bad, s, b{both});
}}
#endif
"
    ));
    out
}

/// The argument lists of the box check functions with `m` checked
/// dimensions, each after a comma when not empty (to follow the leading
/// arguments) and ending in the read parts' arguments given (`pargs`, and
/// `pdecl` for the declarations); `inside`, the box test of every
/// dimension.
struct BoxLists {
    one: String,
    one_decl: String,
    rw: String,
    rw_decl: String,
    both: String,
    inside: String,
}

impl BoxLists {
    fn new(m: usize, pargs: &str, pdecl: &str) -> BoxLists {
        let both = (1..=m)
            .map(|k| format!("st{k}, ex{k}, max(rlo{k}, wlo{k}), min(rhi{k}, whi{k})"))
            .collect::<Vec<_>>()
            .join(", ");
        BoxLists {
            one: cat(&[&box_list(m, &["st", "ex", "lo", "hi"], ""), pargs]),
            one_decl: cat(&[&box_list(m, &["st", "ex", "lo", "hi"], "long "), pdecl]),
            rw: cat(&[
                &box_list(m, &["st", "ex", "rlo", "rhi", "wlo", "whi"], ""),
                pargs,
            ]),
            rw_decl: cat(&[
                &box_list(m, &["st", "ex", "rlo", "rhi", "wlo", "whi"], "long "),
                pdecl,
            ]),
            both: cat(&[&both, pargs]),
            inside: (1..=m)
                .map(|k| format!(" & __clpart_bin(a, n, st{k}, ex{k}, lo{k}, hi{k})"))
                .collect(),
        }
    }
}

/// The names `<name>k` of box dimensions `1..=m`, per dimension in the
/// order of `names`, each after `ty` (`"long "` for declarations).
fn box_list(m: usize, names: &[&str], ty: &str) -> String {
    (1..=m)
        .map(|k| {
            names
                .iter()
                .map(|n| format!("{ty}{n}{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The non-empty lists of `parts`, each after a comma (to follow a
/// function's leading arguments; empty when all are).
pub(super) fn cat(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| format!(", {p}"))
        .collect()
}

/// [`box_header`] with read parts. Without box-checked dimensions (`m` 0:
/// the read runs of a 1-D array) the check is off when part 0 is `[0, 0)`,
/// which a launch without parts passes (every part argument 0); a launch
/// with parts always has a non-empty part 0 (its read window when no part
/// is left).
fn box_parts_header(m: usize, parts: usize) -> String {
    let part_names = |p: usize| {
        (0..=m)
            .map(|k| format!("pl{p}_{k}, ph{p}_{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pargs = (0..parts).map(part_names).collect::<Vec<_>>().join(", ");
    let pdecl = (0..parts)
        .map(|p| {
            (0..=m)
                .map(|k| format!("long pl{p}_{k}, long ph{p}_{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join(", ");
    let in_part = (0..parts)
        .map(|p| {
            let dims = (1..=m)
                .map(|k| format!(" & __clpart_bin(a, n, st{k}, ex{k}, pl{p}_{k}, ph{p}_{k})"))
                .collect::<String>();
            format!(" | ((i >= pl{p}_0) & (i <= ph{p}_0 - n){dims})")
        })
        .collect::<String>();
    let off = if m == 0 { "(ph0_0 == 0)" } else { "(st1 == 0)" };
    let BoxLists {
        one,
        one_decl,
        rw,
        rw_decl,
        both,
        inside,
    } = BoxLists::new(m, &pargs, &pdecl);
    format!(
        "#ifdef CLPART_UNCHECKED
#define __clpart_bchkp{m}_{parts}(i, n, lo, hi, len, bad, s, b{one}) (i)
#define __clpart_brwp{m}_{parts}(i, rlo, rhi, wlo, whi, len, bad, s, b{rw}) (i)
#else
long __clpart_bchkp{m}_{parts}(long i, long n, long lo, long hi, long len, ulong *bad, int s, long b{one_decl}) {{
    long a = (long)((ulong)i + (ulong)b);
    int part = {off}{in_part};
    int ok = (i >= lo) & (i <= hi - n){inside} & part;
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}}
long __clpart_brwp{m}_{parts}(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s, long b{rw_decl}) {{
    return __clpart_bchkp{m}_{parts}(i, 1, max(rlo, wlo), min(rhi, whi), len, bad, s, b{both});
}}
#endif
"
    )
}
