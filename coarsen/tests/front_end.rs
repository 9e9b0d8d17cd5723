//! Front-end cases of issues 10 and 15. Buffers of structs get their element size from OpenCL C's
//! layout (clang's, for the OpenCL target), never 0 or 1.

use coarsen::ir::Type;

fn pointee_of_first_param(src: &str) -> Type {
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    let k = p.kernels().next().unwrap();
    k.params[0].ty.pointee().unwrap().clone()
}

#[test]
fn struct_element_sizes_follow_opencl_layout() {
    // each with its fields' names and byte offsets as laid out
    type Case = (
        &'static str,
        &'static str,
        u32,
        &'static [(&'static str, u32)],
    );
    let cases: [Case; 5] = [
        (
            "typedef struct { float x, y, z; } point;",
            "point",
            12,
            &[("x", 0), ("y", 4), ("z", 8)],
        ),
        // float3 takes 16 bytes, aligned to 16: 16 + 4, padded to 32
        (
            "typedef struct { float3 v; int tag; } tagged;",
            "tagged",
            32,
            &[("v", 0), ("tag", 16)],
        ),
        (
            "typedef struct { char c; double d; } padded;",
            "padded",
            16,
            &[("c", 0), ("d", 8)],
        ),
        (
            "struct pair { int a; long b; }; typedef struct pair pair;",
            "pair",
            16,
            &[("a", 0), ("b", 8)],
        ),
        (
            "typedef union { float f; uint u; } bits;",
            "bits",
            4,
            &[("f", 0), ("u", 0)],
        ),
    ];
    for (decl, name, size, laid_out) in cases {
        let src = format!("{decl}\n__kernel void k(__global {name} *p) {{ }}\n");
        let t = pointee_of_first_param(&src);
        let Type::Struct {
            name: n,
            size: s,
            fields,
        } = &t
        else {
            panic!("{decl}: {t:?}");
        };
        assert_eq!((n.as_str(), *s), (name, size), "{decl}");
        let got: Vec<(&str, u32)> = fields.iter().map(|f| (f.name.as_str(), f.offset)).collect();
        assert_eq!(got, laid_out, "{decl}");
        assert_eq!(t.size(), Some(size));
    }
    // a struct that points to its own type: the pointer is its bytes
    let t = pointee_of_first_param(
        "typedef struct node { struct node *next; int v; } node;\n__kernel void k(__global node *p) { }\n",
    );
    let Type::Struct { fields, .. } = &t else {
        panic!("{t:?}");
    };
    assert!(matches!(fields[0].ty, Type::Other(_)), "{fields:?}");
}

/// A struct passed by value is a parameter of the kernel (its
/// members' values are not followed by the analysis), and so are images
/// and samplers, read through their builtins; a type outside the subset
/// still is not.
#[test]
fn struct_by_value_images_and_samplers_are_parameters() {
    let src = "typedef struct { float x, y; } v2;\n__kernel void k(v2 q, __global float *o) { o[0] = q.x; }\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let src = "__kernel void k(__read_only image2d_t im, sampler_t s, __global float *o) {
    const sampler_t t = CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;
    int2 c = (int2)(get_global_id(0), 0);
    o[c.x] = read_imagef(im, s, c).x + read_imagef(im, t, c).y + get_image_width(im);
}\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let k = p.kernel(Some("k")).unwrap();
    assert!(k.params[0].ty.is_image_or_sampler() && k.params[1].ty.is_image_or_sampler());
    assert!(!k.params[2].ty.is_image_or_sampler());
    let src = "__kernel void k(__global float *o, __local float *t) {
    event_t e = async_work_group_copy(t, o, 4, 0);
    o[0] = t[0];
}\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    assert!(
        p.unsupported_in("k")
            .iter()
            .any(|d| d.message.contains("variable 'e' has unsupported type")),
        "{:?}",
        p.diagnostics
    );
}

/// `(float4)(a, b, c, d)` as a compound literal and loops behind
/// unroll hints parse as a vector literal and plain loops.
#[test]
fn vector_compound_literals_and_unroll_hints_parse() {
    let src = "__kernel void k(__global float4 *o, __global const float *b) {
    int i = get_global_id(0);
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; j++) s += b[i + j];
    #pragma unroll 2
    for (int j = 0; j < 2; j++) s += b[j];
    __attribute__((opencl_unroll_hint(2)))
    for (int j = 0; j < 2; j++) s += b[j];
    float4 v = (float4)(s, b[i], 0.0f, 1.0f);
    o[i] = v;
}";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let k = p.kernels().next().unwrap();
    let loops = k
        .body
        .iter()
        .filter(|s| matches!(s, coarsen::ir::Stmt::For { .. }))
        .count();
    assert_eq!(loops, 3);
    let mut lit = false;
    coarsen::ir::visit_exprs(&k.body, &mut |e| {
        lit |= matches!(&e.kind, coarsen::ir::ExprKind::VectorLit(p) if p.len() == 4)
    });
    assert!(lit);
}

/// `do ... while` is a `while (1)` loop ending in the negated
/// test; with a `continue` of its own (which would skip the test) it stays
/// unsupported.
#[test]
fn do_while_loops_parse_and_continue_in_them_is_refused() {
    let ok = "__kernel void k(__global int *a) { int j = 0; do { a[j] = j; j++; } while (j < 4); }";
    let p = coarsen::parse_program("k.cl", ok, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let k = p.kernels().next().unwrap();
    let Some(coarsen::ir::Stmt::While { body, .. }) = k.body.last() else {
        panic!("{:?}", k.body)
    };
    assert!(
        matches!(body.last(), Some(coarsen::ir::Stmt::If { then, .. }) if matches!(then[..], [coarsen::ir::Stmt::Break(_)]))
    );
    let bad = "__kernel void k(__global int *a) { int j = 0; do { j++; if (j == 2) continue; a[j] = j; } while (j < 4); }";
    let p = coarsen::parse_program("k.cl", bad, &Default::default()).unwrap();
    assert!(
        p.unsupported_in("k")
            .iter()
            .any(|d| d.message.contains("'do ... while' with 'continue'")),
        "{:?}",
        p.diagnostics
    );
    // a continue of a loop nested in the body is that loop's
    let nested = "__kernel void k(__global int *a) { int j = 0; do { for (int q = 0; q < 2; q++) { if (q) continue; a[j] = q; } j++; } while (j < 4); }";
    let p = coarsen::parse_program("k.cl", nested, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
}

/// `switch` without fall-through becomes an `if`/`else if` chain
/// over a temporary; the forms whose meaning that would change are refused
/// with the statement's location (the kernel then runs unsplit).
#[test]
fn switch_without_fall_through_parses_and_the_rest_is_refused() {
    let ok = "__kernel void k(__global int *a, int m) {
  int i = get_global_id(0);
  switch (m) {
  case 1: case 2: a[i] = 1; break;
  case 3: { int t = i; a[i] = t; break; }
  default: a[i] = 0;
  }
}";
    let p = coarsen::parse_program("k.cl", ok, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let c = coarsen::emit_c(&p, "k").unwrap();
    assert!(
        c.contains("int clpart_switch_0 = m;")
            && c.contains("if ((clpart_switch_0 == 1) || (clpart_switch_0 == 2))")
            && c.contains("if (clpart_switch_0 == 3)")
            && !c.contains("break"),
        "{c}"
    );
    let refused = |body: &str, why: &str| {
        let src = format!(
            "__kernel void k(__global int *a, int m) {{ int i = get_global_id(0); {body} }}"
        );
        let p = coarsen::parse_program("k.cl", &src, &Default::default()).unwrap();
        let d = p.unsupported_in("k");
        assert!(
            d.iter()
                .any(|d| d.message.contains(why) && d.span.line == 1 && d.span.col > 1),
            "{body}: {:?}",
            p.diagnostics
        );
    };
    refused(
        "switch (m) { case 1: a[i] = 1; case 2: a[i] += 2; break; }",
        "falls through",
    );
    refused(
        "switch (m) { case 1: if (i > 3) break; a[i] = 1; break; default: a[i] = 0; }",
        "'break' before the end",
    );
    refused(
        "switch (m) { case 1: a[i] = 1; int t = 2; a[i] += t; break; default: a[i] = 0; }",
        "declaration directly in a case",
    );
    // a break of a loop inside a case is that loop's
    let nested = "__kernel void k(__global int *a, int m) { switch (m) { case 1: for (int q = 0; q < 4; q++) { if (q == m) break; a[q] = q; } break; default: a[0] = 0; } }";
    let p = coarsen::parse_program("k.cl", nested, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
}

/// The guarantee: `i[b]` is `b[i]`: the subscript's pointer comes first in
/// the IR whatever the order it is written in.
#[test]
fn subscripts_written_index_first_put_the_pointer_first() {
    use coarsen::ir::{ExprKind, Stmt};
    let src = "__kernel void k(__global float *b, int n) {
    int i = get_global_id(0);
    i[b] = (n - i)[b];
}\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    let k = p.kernel(Some("k")).unwrap();
    let Stmt::Expr(e) = &k.body[1] else {
        panic!("{:?}", k.body[1]);
    };
    let ExprKind::Assign(_, l, r) = &e.kind else {
        panic!("{e:?}");
    };
    for x in [l, r] {
        let ExprKind::Index(b, i) = &x.kind else {
            panic!("{x:?}");
        };
        assert!(matches!(&b.kind, ExprKind::Var(n) if n == "b"), "{b:?}");
        assert!(!matches!(&i.kind, ExprKind::Var(n) if n == "b"), "{i:?}");
    }
}

/// A `switch` case that ends in `continue` leaves for the
/// enclosing loop's next iteration, which the lowered `if` chain keeps: it
/// is not a case falling through into the next.
#[test]
fn switch_cases_may_end_in_continue() {
    let src = "__kernel void k(__global int *b) {
    int i = get_global_id(0);
    for (int j = 0; j < 4; j++) {
        switch (j) { case 1: continue; default: break; }
        b[i * 4 + j] = j + 1;
    }
}\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    assert!(p.unsupported_in("k").is_empty(), "{:?}", p.diagnostics);
    let src = src.replace("continue;", "b[i] = 0;");
    let p = coarsen::parse_program("s.cl", &src, &Default::default()).unwrap();
    assert!(
        p.unsupported_in("k")
            .iter()
            .any(|d| d.message.contains("falls through into the next")),
        "{:?}",
        p.diagnostics
    );
}

/// The texts of a kernel's subscripts, as their spans give them.
fn subscript_texts(src: &str) -> Vec<String> {
    let p = coarsen::parse_program("m.cl", src, &Default::default()).unwrap();
    let mut out = Vec::new();
    coarsen::ir::visit_exprs(&p.functions[0].body, &mut |e| {
        if matches!(e.kind, coarsen::ir::ExprKind::Index(..)) {
            out.push(src[e.span.start as usize..e.span.end as usize].to_string());
        }
    });
    out
}

#[test]
fn an_expression_written_in_a_macro_argument_spans_its_text_there() {
    let src = "#define MIN(a, b) ((a) <= (b) ? (a) : (b))\n\
               #define AT(i) v[(i) + 1]\n\
               #define ADD(a, b) a + b\n\
               __kernel void k(__global const int *v, __global int *o) {\n\
               int w = get_global_id(0);\n\
               o[w] = MIN(v[w], v[w + 2]) + AT(w) + v[ADD(w, 1)];\n}\n";
    let texts = subscript_texts(src);
    // each argument twice (two expansions), the macro-body subscript at
    // its whole expansion, the index built from two arguments not alone
    for t in ["v[w]", "v[w + 2]", "AT(w)", "v[ADD(w, 1)]", "o[w]"] {
        assert!(texts.iter().any(|x| x == t), "{t} not in {texts:?}");
    }
    assert_eq!(
        texts.iter().filter(|x| *x == "v[w]").count(),
        2,
        "{texts:?}"
    );
    let p = coarsen::parse_program("m.cl", src, &Default::default()).unwrap();
    let mut sums = Vec::new();
    coarsen::ir::visit_exprs(&p.functions[0].body, &mut |e| {
        if let coarsen::ir::ExprKind::Index(_, i) = &e.kind {
            if matches!(
                i.kind,
                coarsen::ir::ExprKind::Binary(coarsen::ir::BinOp::Add, ..)
            ) {
                sums.push((i.span.start, i.span.end));
            }
        }
    });
    // `w, 1` is no expression's text: the sum from two arguments keeps
    // the expansion's (empty) span
    assert!(sums.iter().any(|(s, e)| s == e), "{sums:?}");
}
