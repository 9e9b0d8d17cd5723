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
    let cases = [
        ("typedef struct { float x, y, z; } point;", "point", 12),
        // float3 takes 16 bytes, aligned to 16: 16 + 4, padded to 32
        (
            "typedef struct { float3 v; int tag; } tagged;",
            "tagged",
            32,
        ),
        ("typedef struct { char c; double d; } padded;", "padded", 16),
        (
            "struct pair { int a; long b; }; typedef struct pair pair;",
            "pair",
            16,
        ),
        ("typedef union { float f; uint u; } bits;", "bits", 4),
    ];
    for (decl, name, size) in cases {
        let src = format!("{decl}\n__kernel void k(__global {name} *p) {{ }}\n");
        let t = pointee_of_first_param(&src);
        assert_eq!(
            t,
            Type::Struct {
                name: name.to_string(),
                size
            },
            "{decl}"
        );
        assert_eq!(t.size(), Some(size));
    }
}

#[test]
fn struct_by_value_stays_unsupported() {
    let src = "typedef struct { float x, y; } v2;\n__kernel void k(v2 q, __global float *o) { o[0] = 1.0f; }\n";
    let p = coarsen::parse_program("s.cl", src, &Default::default()).unwrap();
    assert!(
        p.unsupported_in("k").iter().any(|d| d
            .message
            .contains("parameter 'q' has unsupported type 'v2'")),
        "{:?}",
        p.diagnostics
    );
}

/// Issue 15: `(float4)(a, b, c, d)` as a compound literal and loops behind
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

/// Issue 15: `do ... while` is a `while (1)` loop ending in the negated
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
