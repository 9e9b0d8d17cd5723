//! Counts the integer points of each isl set read from standard input (one
//! per line) with barvinok and prints the time each took and its pieces.
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let lib = match barvinok_sys::library() {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!("error: barvinok is not available: {e}");
            std::process::exit(1);
        }
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let t = Instant::now();
        let r = lib.context().and_then(|cx| cx.card(&line));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        match r {
            Ok(c) => println!("{ms:9.1} ms  {} pieces  {}", c.pieces.len(), line),
            Err(e) => println!("{ms:9.1} ms  error {e}  {line}"),
        }
    }
}
