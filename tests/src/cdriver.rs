//! Runs the coarsened C of a kernel over a whole NDRange: the test oracle.
//!
//! The kernel's coarsened C is compiled with gcc together with a generated
//! `main` that loads every buffer argument from a file, calls the work-group
//! function for every work-group in order, and writes the buffers back.

use coarsen::ir::{AddrSpace, Program, Type};
use launcher::{ArgValue, KernelArgs, NdRange};
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

/// Options for [`run_coarsened`].
#[derive(Clone, Debug, Default)]
pub struct DriverOptions {
    /// Instrument accesses to global/constant buffers: each access's (argument,
    /// write?, element index) is appended to `trace.txt`.
    pub trace: bool,
}

/// One traced access of the coarsened C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Traced {
    pub arg_index: u32,
    pub is_write: bool,
    pub index: i64,
    /// The work-group's id along each dimension.
    pub group: [u64; 3],
}

/// Runs the coarsened C of `kernel` over `nd` with `args`; buffers of `args`
/// are updated in place with the outputs. Returns the trace when asked for.
pub fn run_coarsened(
    program: &Program,
    kernel: &str,
    nd: &NdRange,
    args: &mut KernelArgs,
    dir: &Path,
    options: &DriverOptions,
) -> Result<Vec<Traced>, String> {
    let emit = coarsen::EmitOptions {
        trace: options.trace,
    };
    let c = coarsen::emit_c_with(program, kernel, &emit).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("clpart_coarsen.h"), coarsen::C_HEADER).unwrap();
    std::fs::write(dir.join("kernel.c"), c).unwrap();
    let k = program.kernel(Some(kernel)).map_err(|e| e.to_string())?;
    let mut main =
        String::from("#include \"clpart_coarsen.h\"\n#include <stdio.h>\n#include <stdlib.h>\n");
    if options.trace {
        let n = k.params.len().max(1);
        // Each element of the buffer's own type an access covers (an
        // access through a pointer cast to another type covers several,
        // or part of one).
        writeln!(main, "FILE *clpart_trace_file; size_t clpart_trace_group[3]; char *clpart_bufs[{n}]; size_t clpart_lens[{n}]; long clpart_es[{n}];").unwrap();
        writeln!(main, "long clpart_trace(const void *p, long idx, size_t size, int mode) {{ char *a = (char *)p + idx * (long)size; for (int i = 0; i < {n}; i++) if (clpart_bufs[i] && a >= clpart_bufs[i] && a < clpart_bufs[i] + clpart_lens[i]) {{ long es = clpart_es[i] > 0 ? clpart_es[i] : (long)size; long lo = (long)((a - clpart_bufs[i]) / es), hi = (long)((a - clpart_bufs[i] + (long)size - 1) / es); for (long e = lo; e <= hi; e++) {{ if (mode != 1) fprintf(clpart_trace_file, \"%d 0 %ld %zu %zu %zu\\n\", i, e, clpart_trace_group[0], clpart_trace_group[1], clpart_trace_group[2]); if (mode != 0) fprintf(clpart_trace_file, \"%d 1 %ld %zu %zu %zu\\n\", i, e, clpart_trace_group[0], clpart_trace_group[1], clpart_trace_group[2]); }} return idx; }} fprintf(clpart_trace_file, \"-1 %d %ld 0 0 0\\n\", mode, idx); return idx; }}").unwrap();
    }
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| match &p.ty {
            Type::Pointer { pointee, .. } => format!("{} *", c_name(pointee)),
            t => c_name(t),
        })
        .collect();
    // the kernel's struct types, for its prototype
    for t in &program.type_decls {
        writeln!(main, "{t}").unwrap();
    }
    writeln!(
        main,
        "void {kernel}({}{}const clpart_wg *);",
        params.join(", "),
        if params.is_empty() { "" } else { ", " }
    )
    .unwrap();
    main.push_str("static void *load(const char *path, size_t n) { void *p = calloc(n ? n : 1, 1); FILE *f = fopen(path, \"rb\"); if (!f || fread(p, 1, n, f) != n) { fprintf(stderr, \"cannot load %s\\n\", path); exit(3); } fclose(f); return p; }\n");
    main.push_str("static void save(const char *path, const void *p, size_t n) { FILE *f = fopen(path, \"wb\"); fwrite(p, 1, n, f); fclose(f); }\n");
    main.push_str("int main(void) {\n");
    if options.trace {
        main.push_str("    clpart_trace_file = fopen(\"trace.txt\", \"w\");\n");
    }
    let mut call_args = Vec::new();
    for (i, (p, v)) in k.params.iter().zip(args.values()).enumerate() {
        match v {
            ArgValue::Buffer(b) => {
                let elem_size = match &p.ty {
                    Type::Pointer { pointee, .. } => pointee.size().unwrap_or(0),
                    _ => 0,
                };
                std::fs::write(dir.join(format!("arg{i}.bin")), b.as_bytes()).unwrap();
                writeln!(
                    main,
                    "    void *a{i} = load(\"arg{i}.bin\", {});",
                    b.as_bytes().len()
                )
                .unwrap();
                if options.trace {
                    writeln!(
                        main,
                        "    clpart_bufs[{i}] = a{i}; clpart_lens[{i}] = {}; clpart_es[{i}] = {};",
                        b.as_bytes().len(),
                        elem_size
                    )
                    .unwrap();
                }
                call_args.push(format!("a{i}"));
            }
            ArgValue::Local { bytes } => {
                writeln!(main, "    void *a{i} = calloc({bytes} + 64, 1);").unwrap();
                call_args.push(format!("a{i}"));
            }
            ArgValue::Scalar { bytes, .. } => {
                let hex: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
                writeln!(
                    main,
                    "    unsigned char s{i}[] = {{{}}}; {} a{i}; memcpy(&a{i}, s{i}, sizeof a{i});",
                    hex.join(", "),
                    params[i]
                )
                .unwrap();
                call_args.push(format!("a{i}"));
            }
        }
        let _ = p;
    }
    let dim = nd.work_dim() as usize;
    let g = |d: usize| if d < dim { nd.global[d] } else { 1 };
    let l = |d: usize| if d < dim { nd.local[d] } else { 1 };
    let o = |d: usize| {
        if d < dim {
            nd.offset.get(d).copied().unwrap_or(0)
        } else {
            0
        }
    };
    writeln!(
        main,
        "    clpart_wg wg = {{ {dim}, {{{}, {}, {}}}, {{{}, {}, {}}}, {{{}, {}, {}}}, {{{}, {}, {}}}, {{0, 0, 0}} }};",
        g(0), g(1), g(2), l(0), l(1), l(2), g(0) / l(0), g(1) / l(1), g(2) / l(2), o(0), o(1), o(2)
    )
    .unwrap();
    main.push_str("    for (size_t z = 0; z < wg.num_groups[2]; z++) for (size_t y = 0; y < wg.num_groups[1]; y++) for (size_t x = 0; x < wg.num_groups[0]; x++) {\n");
    main.push_str("        wg.group_id[0] = x; wg.group_id[1] = y; wg.group_id[2] = z;\n");
    if options.trace {
        main.push_str("        clpart_trace_group[0] = x; clpart_trace_group[1] = y; clpart_trace_group[2] = z;\n");
    }
    writeln!(
        main,
        "        {kernel}({}{}&wg);",
        call_args.join(", "),
        if call_args.is_empty() { "" } else { ", " }
    )
    .unwrap();
    main.push_str("    }\n");
    for (i, v) in args.values().iter().enumerate() {
        if let ArgValue::Buffer(b) = v {
            writeln!(
                main,
                "    save(\"arg{i}.out\", a{i}, {});",
                b.as_bytes().len()
            )
            .unwrap();
        }
    }
    if options.trace {
        main.push_str("    fclose(clpart_trace_file);\n");
    }
    main.push_str("    return 0;\n}\n");
    std::fs::write(dir.join("main.c"), main).unwrap();
    let out = Command::new("gcc")
        .current_dir(dir)
        .args([
            "-std=gnu11",
            "-O1",
            "-fwrapv",
            "-ffp-contract=off",
            "-fno-fast-math",
            "-o",
            "run",
            "main.c",
            "kernel.c",
            "-lm",
        ])
        .args(if options.trace {
            &["-DCLPART_TRACE"][..]
        } else {
            &[][..]
        })
        .output()
        .map_err(|e| format!("gcc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "gcc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = Command::new(dir.join("run"))
        .current_dir(dir)
        .output()
        .map_err(|e| format!("run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "coarsened program failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let n = args.values().len();
    for i in 0..n {
        if let Some(b) = args.buffer_at_mut(i as u32) {
            let bytes =
                std::fs::read(dir.join(format!("arg{i}.out"))).map_err(|e| e.to_string())?;
            b.as_bytes_mut().copy_from_slice(&bytes);
        }
    }
    let mut traced = Vec::new();
    if options.trace {
        let text = std::fs::read_to_string(dir.join("trace.txt")).map_err(|e| e.to_string())?;
        for line in text.lines() {
            let v: Vec<i64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
            if v[0] < 0 {
                return Err(format!("access outside every buffer: {line}"));
            }
            traced.push(Traced {
                arg_index: v[0] as u32,
                is_write: v[1] != 0,
                index: v[2],
                group: [v[3] as u64, v[4] as u64, v[5] as u64],
            });
        }
    }
    Ok(traced)
}

fn c_name(t: &Type) -> String {
    match t {
        Type::Scalar(coarsen::ir::Scalar::Bool) => "_Bool".into(),
        _ => t.name(),
    }
}

/// Whether parameter `p` is a global or constant buffer.
pub fn is_buffer(space: AddrSpace) -> bool {
    matches!(space, AddrSpace::Global | AddrSpace::Constant)
}

/// The traced footprint of a split, in bytes: `kernel` run over the whole
/// NDRange as coarsened C with every global access traced, then per slice
/// (work-groups `[lo, hi)` along `dim`) the distinct elements it reads plus,
/// separately, those it writes, each at its buffer's element size. What a
/// split needs to move at the least (the oracle of the bytes-moved tests).
/// `args` is left as it was; `dir` is scratch space.
pub fn traced_footprint_bytes(
    program: &Program,
    kernel: &str,
    nd: &NdRange,
    args: &KernelArgs,
    dim: u32,
    slices: &[(u64, u64)],
    dir: &Path,
) -> Result<u64, String> {
    let mut scratch = args.clone();
    let trace = run_coarsened(
        program,
        kernel,
        nd,
        &mut scratch,
        dir,
        &DriverOptions { trace: true },
    )?;
    let mut total = 0;
    for &(lo, hi) in slices {
        let mut reads = std::collections::HashSet::new();
        let mut writes = std::collections::HashSet::new();
        for t in trace
            .iter()
            .filter(|t| (lo..hi).contains(&t.group[dim as usize]))
        {
            if t.is_write { &mut writes } else { &mut reads }.insert((t.arg_index, t.index));
        }
        for (arg, _) in reads.iter().chain(&writes) {
            total += args
                .buffer_at(*arg)
                .map_or(0, |b| b.elem().size.max(1) as u64);
        }
    }
    Ok(total)
}
