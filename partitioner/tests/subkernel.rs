//! Subkernel rewriting: the rewritten source parses as OpenCL C, has the extra
//! arguments, and rebases subscripts.

use partitioner::subkernel::rewrite;
use ranges_format::ExtraArgMeaning;

fn program(name: &str) -> coarsen::ir::Program {
    let path = format!("{}/../kernels/{name}.cl", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    coarsen::parse_program(&format!("{name}.cl"), &src, &Default::default()).unwrap()
}

fn reparse(src: &str) {
    coarsen::parse_program("sub.cl", src, &Default::default()).unwrap_or_else(|e| panic!("subkernel does not parse: {e}\n{src}"));
}

#[test]
fn vadd_subscripts_are_rebased() {
    let p = program("vadd");
    let s = rewrite(&p, "vadd", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    // every access rebased and checked by the run-time guard (issue 10)
    assert!(
        s.source.contains("c[__clpart_w((long)(i) - __clpart_base_c, __clpart_wlo_c, __clpart_whi_c, __clpart_len_c, &__clpart_bad, 2)] = a[__clpart_r((long)(i) - __clpart_base_a, __clpart_rlo_a, __clpart_rhi_a, __clpart_len_a, &__clpart_bad, 0)]"),
        "{}",
        s.source
    );
    assert_eq!(s.guarded, vec![0, 1, 2]);
    assert_eq!(s.extra_args.len(), 3 * 6 + 1);
    assert_eq!(s.extra_args[0].meaning, ExtraArgMeaning::ArrayBase { arg_index: 0 });
    assert_eq!(s.extra_args.last().unwrap().meaning, ExtraArgMeaning::GuardFlags);
    // the private accumulator, flushed at the end of the kernel
    assert!(s.source.contains("ulong __clpart_bad = 0;") && s.source.contains("__clpart_flush(__clpart_bad, __clpart_guard);"), "{}", s.source);
}

#[test]
fn group_id_and_sizes_return_unsplit_values() {
    let p = program("reduce_sum");
    let s = rewrite(&p, "reduce_sum", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(s.source.contains("(get_group_id(0) + __clpart_group_base0)"), "{}", s.source);
    assert!(s.extra_args.iter().any(|a| a.meaning == ExtraArgMeaning::GroupIdBase(0)));
}

#[test]
fn every_corpus_kernel_rewrites_to_valid_opencl() {
    let dir = format!("{}/../kernels", env!("CARGO_MANIFEST_DIR"));
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "cl") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let p = program(&name);
        let k = p.kernel(None).unwrap();
        let ptrs: Vec<u32> = k
            .params
            .iter()
            .enumerate()
            .filter(|(_, q)| matches!(q.space(), coarsen::ir::AddrSpace::Global | coarsen::ir::AddrSpace::Constant))
            .map(|(i, _)| i as u32)
            .collect();
        match rewrite(&p, &k.name, &ptrs) {
            Ok(s) => reparse(&s.source),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
}

/// Issue 10: every buffer of every corpus kernel is checked by the run-time
/// guard, except the pointers copied into variables of the `issue10_ptr_*`
/// kernels (which the guard cannot follow: those kernels run unsplit).
#[test]
fn issue10_guard_covers_every_corpus_buffer() {
    let dir = format!("{}/../kernels", env!("CARGO_MANIFEST_DIR"));
    let mut unguarded = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "cl") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let p = program(&name);
        let k = p.kernel(None).unwrap();
        let Ok(s) = rewrite(&p, &k.name, &[]) else { continue };
        reparse(&s.source);
        for (i, why) in &s.unguarded {
            if !name.starts_with("issue10_ptr_") {
                unguarded.push(format!("{name}: {i}: {why}"));
            }
        }
        if name.starts_with("issue10_ptr_") {
            assert!(!s.unguarded.is_empty(), "{name}: the copied pointer must be reported");
        }
        let n_buffers = k.params.iter().filter(|q| matches!(q.space(), coarsen::ir::AddrSpace::Global | coarsen::ir::AddrSpace::Constant | coarsen::ir::AddrSpace::Local)).count();
        assert_eq!(s.guarded.len() + s.unguarded.len(), n_buffers, "{name}");
    }
    unguarded.sort();
    assert!(unguarded.is_empty(), "unguarded buffers:\n{}", unguarded.join("\n"));
}

/// Issue 10: pointers passed to helpers are checked inside a clone of the
/// helper; pointer arithmetic chains and atomics are checked in place.
#[test]
fn issue10_guard_clones_helpers_and_checks_pointer_chains() {
    let p = program("helper_call");
    let s = rewrite(&p, "helper_call", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert!(s.source.contains("float pair_avg__clpart_b(__global const float *p, int i, long __clpart_base_b"), "{}", s.source);
    assert!(s.source.contains("pair_avg__clpart_b(b, i, __clpart_base_b"), "{}", s.source);
    let p = program("fan1");
    let s = rewrite(&p, "fan1", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert!(s.source.contains("m_dev[__clpart_w((long)(((m_dev + size"), "{}", s.source);
    let p = program("histogram");
    let s = rewrite(&p, "histogram", &[]).unwrap();
    reparse(&s.source);
    assert!(s.source.contains("atomic_inc(&bins[__clpart_rw("), "{}", s.source);
}

/// Issue 10: a pointer the guard cannot follow is reported with its reason.
#[test]
fn issue10_guard_reports_pointers_it_cannot_check() {
    let src = "__kernel void k(__global float *a, __global float *b) {\n    __global float *q = a;\n    b[get_global_id(0)] = q[get_global_id(0)];\n}\n";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "k", &[]).unwrap();
    reparse(&s.source);
    assert_eq!(s.guarded, vec![1]);
    assert_eq!(s.unguarded.len(), 1);
    assert!(s.unguarded[0].1.contains("'a'"), "{:?}", s.unguarded);
}

/// The body between the per-work-group test's `if` and `else`: the fast copy.
fn fast_copy(src: &str) -> &str {
    let a = src.find("if (__clpart_fast) {").unwrap_or_else(|| panic!("no per-work-group test:\n{src}"));
    let b = src[a..].find("} else {").map(|b| a + b).unwrap();
    &src[a..b]
}

#[test]
fn issue10_proven_accesses_use_plain_indices_in_the_fast_copy() {
    let p = program("vadd");
    let s = rewrite(&p, "vadd", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(fast.contains("c[((long)(i) - __clpart_base_c)] = a[((long)(i) - __clpart_base_a)] + b[((long)(i) - __clpart_base_b)]"), "{fast}");
    // the checked copy keeps every check; the test compares each access's
    // interval over the group with its window
    assert!(s.source.contains("} else {") && s.source.contains("c[__clpart_w((long)(i) - __clpart_base_c"), "{}", s.source);
    assert!(s.source.contains("(__clpart_g3 <= __clpart_rhi_a - 1)") || s.source.contains("<= __clpart_rhi_a - 1)"), "{}", s.source);
    // compiled out with the checks
    assert!(s.source.contains("#ifndef CLPART_UNCHECKED"), "{}", s.source);
}

#[test]
fn issue10_the_fast_copy_keeps_checks_it_cannot_prove() {
    // a data-dependent subscript, a narrowing conversion of a loaded value,
    // and a variable assigned twice stay checked in the fast copy
    let src = "__kernel void k(__global const int *idx, __global int *a, __global int *b, int n) {
    int i = get_global_id(0);
    int j = i;
    j = j + n;
    a[idx[i]] = 1;
    b[j] = 2;
}";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "k", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(fast.contains("a[__clpart_w("), "{fast}");
    assert!(fast.contains("b[__clpart_w("), "{fast}");
    assert!(fast.contains("idx[((long)(i) - __clpart_base_idx)]"), "{fast}");
}

#[test]
fn issue10_local_tiles_stay_at_kernel_scope() {
    let p = program("matmul_tiled");
    let s = rewrite(&p, "matmul_tiled", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(!fast.contains("__local float"), "{fast}");
    let test = s.source.find("#ifndef CLPART_UNCHECKED\n    /* one test").unwrap();
    let decl = s.source.find("__local float as[TILE][TILE];").unwrap();
    assert!(decl < test, "{}", s.source);
    assert!(!fast.contains("__clpart_r(") && !fast.contains("__clpart_w("), "every tile load is proven: {fast}");
}

#[test]
fn issue10_narrowing_conversions_are_tested_not_assumed() {
    // (uchar)i is exact only while i < 256: the test requires it at run time
    let p = program("issue10_uchar_subscript");
    let k = p.kernel(None).unwrap().name.clone();
    let n = p.kernel(None).unwrap().params.len() as u32;
    let s = rewrite(&p, &k, &(0..n).collect::<Vec<_>>()).unwrap();
    reparse(&s.source);
    assert!(s.source.contains("<= 255L)"), "{}", s.source);
}
