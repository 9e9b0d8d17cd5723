//! The pure launch planning: NDRange validation, the split of work-groups
//! by shares, and the evaluation of real range files' expressions over
//! arbitrary parameter values (no OpenCL device needed).
#![no_main]

use launcher::{split_groups, NdRange};
use libfuzzer_sys::fuzz_target;
use ranges_format::RangeFile;
use std::sync::OnceLock;

const SAMPLES: &[&str] = &[
    include_str!("../../ranges-format/tests/data/v2_vadd.ranges.ron"),
    include_str!("../../ranges-format/tests/data/v2_matmul.ranges.ron"),
];

fn samples() -> &'static [RangeFile] {
    static FILES: OnceLock<Vec<RangeFile>> = OnceLock::new();
    FILES.get_or_init(|| SAMPLES.iter().map(|t| RangeFile::from_ron_str(t).unwrap()).collect())
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u64(&mut self) -> u64 {
        let n = self.0.len().min(8);
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        u64::from_le_bytes(b)
    }
    fn u8(&mut self) -> u8 {
        let v = self.0.first().copied().unwrap_or(0);
        self.0 = self.0.get(1..).unwrap_or(&[]);
        v
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    // NDRange: 0 to 4 dimensions (only 1 to 3 are valid), small or huge sizes.
    let dims = (b.u8() % 5) as usize;
    let size = |b: &mut Bytes| match b.u8() % 3 {
        0 => b.u8() as u64,
        1 => b.u64() % 100_000,
        _ => b.u64(),
    };
    let global: Vec<u64> = (0..dims).map(|_| size(&mut b)).collect();
    let local: Vec<u64> = (0..dims).map(|_| size(&mut b)).collect();
    let offset: Vec<u64> = (0..dims).map(|_| size(&mut b)).collect();
    if let Ok(nd) = NdRange::with_offset(&global, &local, &offset) {
        for d in 0..4 {
            let _ = (nd.n_groups(d), nd.global_size(d), nd.local_size(d), nd.global_offset(d));
        }
        let _ = nd.n_groups_total();
        // Shares as `launch` accepts them: finite, non-negative, summing to 1.
        let n_shares = 1 + (b.u8() % 4) as usize;
        let raw: Vec<f64> = (0..n_shares).map(|_| b.u8() as f64).collect();
        let total: f64 = raw.iter().sum();
        let shares: Vec<f64> = if total > 0.0 {
            raw.iter().map(|r| r / total).collect()
        } else {
            vec![1.0 / n_shares as f64; n_shares]
        };
        let n = nd.n_groups((b.u8() % 3) as u32);
        let slices = split_groups(n, &shares);
        assert_eq!(slices.len(), shares.len());
        let mut lo = 0;
        for &(l, h) in &slices {
            assert!(l == lo && h >= l, "{slices:?}");
            lo = h;
        }
        assert_eq!(lo, n, "{slices:?} {shares:?}");
    }

    // Range evaluation of real range files over arbitrary values.
    let f = &samples()[(b.u8() % 2) as usize];
    for k in &f.kernels {
        let names = k.param_names();
        let values: Vec<i64> = (0..names.len()).map(|_| b.u64() as i64).collect();
        for a in &k.arrays {
            for r in [&a.total, &a.slice, &a.read_slice, &a.write_slice].into_iter().flatten() {
                let _ = r.bind(&names).unwrap().eval(&values);
            }
            for c in [a.count_total.as_ref(), a.count_slice.as_ref()].into_iter().flatten() {
                let _ = c.bind(&names).unwrap().eval(&values);
            }
        }
    }
});
