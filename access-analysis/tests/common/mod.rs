//! Shared helpers of the semantic tests: running the analysis on corpus files
//! or inline sources, fixing parameters, and comparing with isl.
#![allow(dead_code)]

use access_analysis::{
    analyze_kernel, AnalysisOptions, ArrayAccesses, KernelAccesses, ParamSource,
};
use isl_rs::{Context, Map, Set};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "../../../tests/src/corpus_files.rs"]
pub mod corpus_files;

/// The workspace's `kernels/` folder.
pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// The accesses of the first kernel of corpus file `file` (`vadd.cl`, in
/// whichever folder of `kernels/` it sits), parsed under that name.
pub fn corpus(file: &str, options: &AnalysisOptions) -> KernelAccesses {
    let stem = file.strip_suffix(".cl").unwrap_or(file);
    let path = corpus_files::corpus_file(&kernels_dir(), stem);
    let source = std::fs::read_to_string(&path).unwrap();
    let program = coarsen::parse_program(file, &source, &coarsen::ParseOptions::default()).unwrap();
    let name = program.kernels().next().unwrap().name.clone();
    analyze_kernel(&program, &name, options).unwrap()
}

pub fn inline(source: &str, options: &AnalysisOptions) -> KernelAccesses {
    let program =
        coarsen::parse_program("test.cl", source, &coarsen::ParseOptions::default()).unwrap();
    assert!(program
        .unsupported_in(&program.kernels().next().unwrap().name)
        .is_empty());
    let name = program.kernels().next().unwrap().name.clone();
    analyze_kernel(&program, &name, options).unwrap()
}

/// A concrete launch: NDRange and integer scalar arguments by name.
#[derive(Clone, Debug)]
pub struct Launch {
    pub gs: [i64; 3],
    pub ls: [i64; 3],
    pub go: [i64; 3],
    pub scalars: BTreeMap<String, i64>,
}

impl Launch {
    pub fn new(gs: [i64; 3], ls: [i64; 3]) -> Launch {
        Launch {
            gs,
            ls,
            go: [0; 3],
            scalars: BTreeMap::new(),
        }
    }

    pub fn arg(mut self, name: &str, v: i64) -> Launch {
        self.scalars.insert(name.into(), v);
        self
    }

    pub fn offset(mut self, go: [i64; 3]) -> Launch {
        self.go = go;
        self
    }

    /// Every work-item: (global id, local id, group id).
    pub fn work_items(&self) -> Vec<([i64; 3], [i64; 3], [i64; 3])> {
        let mut out = Vec::new();
        for x2 in 0..self.gs[2] {
            for x1 in 0..self.gs[1] {
                for x0 in 0..self.gs[0] {
                    let r = [x0, x1, x2];
                    let l = [r[0] % self.ls[0], r[1] % self.ls[1], r[2] % self.ls[2]];
                    let g = [r[0] / self.ls[0], r[1] / self.ls[1], r[2] / self.ls[2]];
                    out.push(([x0 + self.go[0], x1 + self.go[1], x2 + self.go[2]], l, g));
                }
            }
        }
        out
    }

    /// The value of a parameter of `ka`.
    pub fn value(&self, ka: &KernelAccesses, name: &str) -> i64 {
        let p = ka
            .params
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no param {name}"));
        match p.source {
            ParamSource::GlobalSize(d) => self.gs[d as usize],
            ParamSource::LocalSize(d) => self.ls[d as usize],
            ParamSource::GlobalOffset(d) => self.go[d as usize],
            ParamSource::NumGroups(d) => self.gs[d as usize] / self.ls[d as usize],
            ParamSource::ScalarArg { .. } | ParamSource::StructMember { .. } => *self
                .scalars
                .get(name)
                .unwrap_or_else(|| panic!("no value for {name}")),
            ParamSource::SliceLo
            | ParamSource::SliceHi
            | ParamSource::SliceLoItem
            | ParamSource::SliceHiItem => {
                panic!("the access analysis has no slice parameter ({name})")
            }
        }
    }

    /// `[params] -> { : p = v and ... }` fixing every parameter of `ka`.
    pub fn fix(&self, ka: &KernelAccesses) -> String {
        let names: Vec<&str> = ka.params.iter().map(|p| p.name.as_str()).collect();
        let eqs: Vec<String> = names
            .iter()
            .map(|n| format!("{n} = {}", self.value(ka, n)))
            .collect();
        format!(
            "[{}] -> {{ : {} }}",
            names.join(", "),
            if eqs.is_empty() {
                "true".into()
            } else {
                eqs.join(" and ")
            }
        )
    }
}

/// Parses `text` as a map.
pub fn map(ctx: &Context, text: &str) -> Map {
    Map::read_from_str(ctx, text).unwrap_or_else(|e| panic!("bad map {text}: {e}"))
}

pub fn set(ctx: &Context, text: &str) -> Set {
    Set::read_from_str(ctx, text).unwrap_or_else(|e| panic!("bad set {text}: {e}"))
}

/// The relation `which` of array `a` for the concrete launch, with element
/// indices linearized (`sum out_k * strides[k]`).
pub fn concrete(
    ctx: &Context,
    ka: &KernelAccesses,
    a: &ArrayAccesses,
    which: &str,
    launch: &Launch,
) -> Map {
    let text = match which {
        "reads" => &a.reads,
        "must" => &a.must_writes,
        "may" => &a.may_writes,
        _ => unreachable!(),
    };
    let m = map(ctx, text)
        .intersect_params(set(ctx, &ka.context))
        .unwrap()
        .intersect_params(set(ctx, &launch.fix(ka)))
        .unwrap();
    if a.strides.len() == 1 {
        return m;
    }
    let outs: Vec<String> = (0..a.strides.len()).map(|k| format!("o{k}")).collect();
    let terms: Vec<String> = a
        .strides
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let v: i64 = s
                .split('*')
                .map(|f| f.parse::<i64>().unwrap_or_else(|_| launch.value(ka, f)))
                .product();
            format!("{v}*o{k}")
        })
        .collect();
    let lin = format!(
        "{{ {}[{}] -> {}[{}] }}",
        a.name,
        outs.join(", "),
        a.name,
        terms.join(" + ")
    );
    m.apply_range(map(ctx, &lin)).unwrap()
}

/// `{ W[x] -> name[i]; ... }` from explicit pairs (`false` when none).
pub fn pairs(name: &str, ps: &[([i64; 3], i64)]) -> String {
    if ps.is_empty() {
        return format!("{{ W[x0, x1, x2] -> {name}[o] : false }}");
    }
    let parts: Vec<String> = ps
        .iter()
        .map(|(x, i)| format!("W[{}, {}, {}] -> {name}[{i}]", x[0], x[1], x[2]))
        .collect();
    format!("{{ {} }}", parts.join("; "))
}

/// `[p1, p2, ...] -> `: the parameter header of `ka`'s relations.
pub fn params_header(ka: &KernelAccesses) -> String {
    let names: Vec<&str> = ka.params.iter().map(|p| p.name.as_str()).collect();
    format!("[{}] -> ", names.join(", "))
}

/// Asserts that relation `rel` (`reads`, `must`, `may`) of array `name`
/// at `launch` is exactly the (work-item, element) pairs `want`.
pub fn assert_relation(
    ka: &KernelAccesses,
    name: &str,
    rel: &str,
    launch: &Launch,
    want: &[([i64; 3], i64)],
) {
    let ctx = Context::alloc();
    let a = ka.array(name).unwrap();
    assert!(a.whole.is_none(), "{name}: {:?}", a.whole);
    let real = map(&ctx, &format!("{}{}", params_header(ka), pairs(name, want)))
        .intersect_params(set(&ctx, &launch.fix(ka)))
        .unwrap();
    let got = concrete(&ctx, ka, a, rel, launch);
    assert!(
        got.is_equal(&real).unwrap(),
        "{name} {rel}: {}\nwant {}",
        got.to_str().unwrap(),
        real.to_str().unwrap()
    );
}
