//! Measures the cost of evaluating bound range expressions, the launcher's
//! per-launch work. Not a test: run it with
//!
//! ```text
//! cargo run --release -p ranges-format --example eval_cost
//! ```
//!
//! and it prints nanoseconds per evaluation for a few typical expressions.

use std::hint::black_box;
use std::time::Instant;

use ranges_format::{Chamber, Count, PwExpr};

fn main() {
    let names = ["N", "lo", "hi"];
    let cases = [
        "[N, lo, hi] -> { [(-1 + 16hi)] : hi > lo }",
        "[N, lo, hi] -> { [(-1 + 16hi)] : 0 <= lo < hi and 16hi <= N; [(-1 + N)] : lo >= 0 and 16lo < N < 16hi }",
        "[N, lo, hi] -> { [(min(N, 64hi) - 1)] : hi > lo >= 0 and N > 64lo }",
        "[N] -> { [(N)] : exists (e0 = floor((-1 + N)/2): N >= 2e0 + 1) }",
        "1/2 * N^2 + [0, 1/2]_N * N",
    ];
    const ROUNDS: u32 = 1_000_000;
    for text in cases {
        let bound = PwExpr::parse(text).unwrap().bind(&names).unwrap();
        let start = Instant::now();
        for i in 0..ROUNDS {
            let v = [1000 + (i & 7) as i64, 10, 40];
            black_box(bound.eval(black_box(&v)).ok());
        }
        let ns = start.elapsed().as_nanos() as f64 / ROUNDS as f64;
        println!("{ns:8.1} ns  {text}");
    }
    let count = Count {
        at: Vec::new(),
        terms: vec![vec![
            Chamber {
                domain: "0 <= lo < hi and 16hi <= N".into(),
                value: "16hi - 16lo".into(),
            },
            Chamber {
                domain: "lo >= 0 and 16lo < N < 16hi".into(),
                value: "N - 16lo".into(),
            },
        ]],
    };
    let bound = count.bind(&names).unwrap();
    let start = Instant::now();
    for i in 0..ROUNDS {
        let v = [1000 + (i & 7) as i64, 10, 63];
        black_box(bound.eval(black_box(&v)).ok());
    }
    let ns = start.elapsed().as_nanos() as f64 / ROUNDS as f64;
    println!("{ns:8.1} ns  two-chamber Ehrhart count");
}
