//! Analyzes one kernel file repeatedly, for profiling (`perf record`):
//! `analyze_loop FILE [RUNS] [--no-counts]`. Prints the median time.
use partitioner::{Counts, PartitionOptions};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args
        .first()
        .ok_or_else(|| "usage: analyze_loop FILE [RUNS] [--no-counts]")?;
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let options = PartitionOptions {
        counts: if args.iter().any(|a| a == "--no-counts") {
            Counts::None
        } else if args.iter().any(|a| a == "--written-counts") {
            Counts::Written
        } else {
            Counts::All
        },
        ..PartitionOptions::default()
    };
    let source = std::fs::read_to_string(file)?;
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        session::Session::from_source(file, &source, &[])?.analyze(None, &options)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{file}: median {:.1} ms over {runs} runs (min {:.1})",
        times[runs / 2],
        times[0]
    );
    Ok(())
}
