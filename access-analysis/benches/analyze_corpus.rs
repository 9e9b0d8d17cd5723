//! `cargo bench -p access-analysis`: analysis time per corpus kernel (median
//! of several runs, parsing excluded), as a table on stdout.

#[allow(dead_code)]
#[path = "../../tests/src/corpus_files.rs"]
mod corpus_files;

use access_analysis::{analyze_kernel, AnalysisOptions};
use std::path::Path;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let files = corpus_files::corpus_files(&dir);
    println!(
        "{:<20} {:>7} {:>7} {:>12}",
        "kernel", "arrays", "whole", "median"
    );
    let mut total = Duration::ZERO;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        let program =
            coarsen::parse_program(&name, &source, &coarsen::ParseOptions::default()).unwrap();
        for k in program.kernels() {
            let mut times = Vec::new();
            let mut result = None;
            for _ in 0..RUNS {
                let t = Instant::now();
                result =
                    Some(analyze_kernel(&program, &k.name, &AnalysisOptions::default()).unwrap());
                times.push(t.elapsed());
            }
            times.sort();
            let r = result.unwrap();
            let whole = r.arrays.iter().filter(|a| a.whole.is_some()).count();
            println!(
                "{:<20} {:>7} {:>7} {:>10.1}ms",
                k.name,
                r.arrays.len(),
                whole,
                times[RUNS / 2].as_secs_f64() * 1e3
            );
            total += times[RUNS / 2];
        }
    }
    println!(
        "{:<20} {:>7} {:>7} {:>10.1}ms",
        "total",
        "",
        "",
        total.as_secs_f64() * 1e3
    );
}
