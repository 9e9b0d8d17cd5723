//! The range-file loader: any bytes are refused with an error or loaded;
//! a loaded file validates, every expression binds and evaluates (without
//! panicking) over values taken from the input, and it round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ranges_fuzz_check(data);
});

fn ranges_fuzz_check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(f) = ranges_format::RangeFile::from_ron_str_unvalidated(text) {
        let _ = f.validate();
    }
    let Ok(f) = ranges_format::RangeFile::from_ron_str(text) else { return };
    f.validate().expect("a loaded file validates");
    let again = f.to_ron_string().expect("a loaded file serializes");
    assert_eq!(
        ranges_format::RangeFile::from_ron_str(&again).expect("and loads back"),
        f
    );
    let seed = data.iter().fold(0i64, |a, &b| a.wrapping_mul(31).wrapping_add(b as i64));
    for k in &f.kernels {
        let names = k.param_names();
        let values: Vec<i64> = (0..names.len() as i64)
            .map(|i| (seed.rotate_left(i as u32 * 7) % 4099) - 2)
            .collect();
        for a in &k.arrays {
            for r in [&a.total, &a.slice, &a.read_slice, &a.write_slice].into_iter().flatten() {
                let b = r.bind(&names).expect("validated ranges bind");
                let _ = b.eval(&values);
            }
            let written = a.write.as_ref().and_then(|w| w.written_count.as_ref());
            for c in [a.count_total.as_ref(), a.count_slice.as_ref(), written].into_iter().flatten() {
                let b = c.bind(&names).expect("validated counts bind");
                let _ = b.eval(&values);
            }
            if let Some(bx) = &a.boxes {
                for s in &bx.strides {
                    let e = ranges_format::PwExpr::parse(s).expect("validated strides parse");
                    let _ = e.bind(&names).expect("validated strides bind").eval(&values);
                }
                for r in [&bx.read, &bx.write].into_iter().flatten().flatten() {
                    let _ = r.bind(&names).expect("validated boxes bind").eval(&values);
                }
            }
        }
        for asm in &k.assumptions {
            let c = ranges_format::Condition::parse(&asm.condition).expect("validated");
            let _ = c.bind(&names).expect("validated").eval(&values);
        }
    }
}
