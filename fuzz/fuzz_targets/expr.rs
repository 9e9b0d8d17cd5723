//! The piecewise expression and condition parser and evaluator: any text
//! parses or is refused; what parses binds to its own parameters (plus
//! extra names) and evaluates over arbitrary values without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranges_format::{Condition, PwExpr};

fuzz_target!(|data: &[u8]| {
    // First 8 bytes per value (up to 4 values), the rest is the text.
    let n_vals = (data.first().copied().unwrap_or(0) % 5) as usize;
    let data = data.get(1..).unwrap_or(&[]);
    let split = (n_vals * 8).min(data.len());
    let values: Vec<i64> = data[..split]
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            i64::from_le_bytes(b)
        })
        .collect();
    let Ok(text) = std::str::from_utf8(&data[split..]) else { return };

    if let Ok(e) = PwExpr::parse(text) {
        let mut names: Vec<&str> = e.params().iter().map(String::as_str).collect();
        names.push("zz_extra");
        let b = e.bind(&names).expect("an expression binds to its own parameters");
        let _ = b.eval(&values);
        let _ = e.eval_named(&names, &values);
        let _ = e.piece_texts();
    }
    if let Ok(c) = Condition::parse(text) {
        let names: Vec<&str> = c.params().iter().map(String::as_str).collect();
        let b = c.bind(&names).expect("a condition binds to its own parameters");
        let _ = b.eval(&values);
    }
});
