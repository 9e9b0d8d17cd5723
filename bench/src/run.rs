//! One run of the bench: what every item reads ([`Settings`], with the
//! repeat counts and sizes of [`Scale`]) and what it adds to ([`Report`]).

use std::path::PathBuf;

use clpart_tests::CorpusKernel;

use crate::table::Row;

/// Repeat counts and sizes of one run.
pub(crate) struct Scale {
    pub(crate) analysis_reps: usize,
    /// Stop repeating a kernel's analysis once it has taken this long (at
    /// least one run each way).
    pub(crate) analysis_budget_ms: f64,
    pub(crate) n_launches: usize,
    pub(crate) coexec_reps: usize,
    pub(crate) matmul_n: u64,
    pub(crate) mdh_points: u64,
    pub(crate) mdh_atoms: u64,
    pub(crate) walk_items: u64,
    pub(crate) walk_steps: u64,
    pub(crate) mem_elements: u64,
}

pub(crate) const FULL: Scale = Scale {
    analysis_reps: 5,
    analysis_budget_ms: 4000.0,
    n_launches: 3000,
    coexec_reps: 3,
    matmul_n: 1024,
    mdh_points: 65536,
    mdh_atoms: 1024,
    walk_items: 16384,
    walk_steps: 2048,
    mem_elements: 16 << 20,
};

pub(crate) const QUICK: Scale = Scale {
    analysis_reps: 1,
    analysis_budget_ms: 0.0,
    n_launches: 50,
    coexec_reps: 1,
    matmul_n: 256,
    mdh_points: 8192,
    mdh_atoms: 256,
    walk_items: 2048,
    walk_steps: 256,
    mem_elements: 1 << 20,
};

/// What every item reads: the `clpart` binary, the workspace, the scale,
/// the corpus, and the command line's choices the items take.
pub(crate) struct Settings {
    pub(crate) clpart: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) scale: &'static Scale,
    pub(crate) corpus: Vec<CorpusKernel>,
    pub(crate) cli: Choices,
}

/// The command line's choices the items read (see `Cli`).
pub(crate) struct Choices {
    pub(crate) quick: bool,
    pub(crate) kernels: Vec<String>,
    pub(crate) apps: Vec<String>,
    pub(crate) apps_args: Vec<String>,
    pub(crate) apps_time_limit: u64,
    pub(crate) apps_memory_limit: u64,
}

/// What the items add to: the summary table's rows, the detail tables,
/// and the JSON results by item.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) rows: Vec<Row>,
    pub(crate) details: String,
    pub(crate) results: serde_json::Map<String, serde_json::Value>,
}
