//! The NDRange of a launch.

use std::fmt;

use serde::Serialize;

use crate::error::{LaunchError, Result};
use crate::runtime::DeviceInfo;

/// `a,b,c`.
fn join(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Global size, work-group (local) size and global offset, one entry per
/// dimension (1 to 3). The global size must be a multiple of the local size
/// (the split unit is the work-group).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NdRange {
    /// Work-items per dimension.
    pub global: Vec<u64>,
    /// Work-items per work-group per dimension.
    pub local: Vec<u64>,
    /// Global work offset per dimension.
    pub offset: Vec<u64>,
}

/// Most work-items of one launch, and most work-groups per dimension,
/// whatever the device says: PoCL's CPU devices report 64 address bits but
/// crash (SIGILL, SIGFPE or an abort inside the driver) on 2^39 work-items
/// in 2^33 work-groups and on 2^40 work-items, while 2^32 - 1 work-items
/// run. 2^32 - 1 is also the most a 32-bit `size_t` holds, so a launch
/// within it runs wherever OpenCL runs.
pub const MAX_WORK_ITEMS: u64 = u32::MAX as u64;

/// Most work-groups in one dimension (see [`MAX_WORK_ITEMS`]): the largest
/// `int`, as drivers that count groups in `int` need.
pub const MAX_GROUPS_PER_DIM: u64 = i32::MAX as u64;

fn nd_err(message: String) -> LaunchError {
    LaunchError::NdRange { message }
}

impl NdRange {
    /// An NDRange without offset.
    pub fn new(global: &[u64], local: &[u64]) -> Result<NdRange> {
        NdRange::with_offset(global, local, &vec![0; global.len()])
    }

    /// An NDRange with a global work offset.
    pub fn with_offset(global: &[u64], local: &[u64], offset: &[u64]) -> Result<NdRange> {
        let r = NdRange {
            global: global.to_vec(),
            local: local.to_vec(),
            offset: offset.to_vec(),
        };
        r.validate()?;
        Ok(r)
    }

    /// Parses sizes written `1024`, `1024x768` or `1024,768`.
    pub fn parse_sizes(text: &str) -> Result<Vec<u64>> {
        text.split(['x', ','])
            .map(|p| {
                p.trim().parse::<u64>().map_err(|_| {
                    nd_err(format!(
                        "'{p}' in '{text}' is not a size (write sizes as 1024x768)"
                    ))
                })
            })
            .collect()
    }

    /// The work-group size clpart picks when none is given: in dimension 0
    /// the largest divisor of the global size up to 64, 1 in the others
    /// (the work-group is the split unit, so a size of 1 would make
    /// splitting and launching needlessly fine-grained).
    pub fn default_local(global: &[u64]) -> Vec<u64> {
        global
            .iter()
            .enumerate()
            .map(|(d, &g)| {
                if d == 0 {
                    (1..=g.clamp(1, 64)).rev().find(|l| g % l == 0).unwrap_or(1)
                } else {
                    1
                }
            })
            .collect()
    }

    /// Checks that `device` can run this NDRange: each work-group within
    /// its work-group size and work-item sizes, the global size within its
    /// `size_t` and within [`MAX_WORK_ITEMS`], the work-groups of each
    /// dimension within [`MAX_GROUPS_PER_DIM`]. Call after [`Self::validate`].
    pub fn check_device(&self, device: &DeviceInfo) -> Result<()> {
        let beyond = |what: String, limit: String| LaunchError::BeyondDevice {
            what,
            device: device.label(),
            limit,
        };
        let local_items: u64 = self.local.iter().product();
        if device.max_work_group_size > 0 && local_items > device.max_work_group_size {
            return Err(beyond(
                format!(
                    "local size {} ({local_items} work-items)",
                    join(&self.local)
                ),
                format!(
                    "at most {} work-items in a work-group",
                    device.max_work_group_size
                ),
            ));
        }
        for (d, &l) in self.local.iter().enumerate() {
            if let Some(&max) = device.max_work_item_sizes.get(d) {
                if max > 0 && l > max {
                    return Err(beyond(
                        format!("local size {l} in dimension {d}"),
                        format!("at most {max} work-items in dimension {d}"),
                    ));
                }
            }
        }
        let size_t_max = match device.address_bits {
            1..=63 => (1u64 << device.address_bits) - 1,
            _ => u64::MAX,
        };
        let max_items = size_t_max.min(MAX_WORK_ITEMS);
        let mut total = 1u64;
        for d in 0..self.global.len() {
            let g = self.global[d];
            let end = g.saturating_add(self.offset[d]);
            if g > max_items || end > size_t_max {
                return Err(beyond(
                    format!("global size {g} in dimension {d}"),
                    format!("at most {max_items} work-items"),
                ));
            }
            let groups = g / self.local[d];
            if groups > MAX_GROUPS_PER_DIM {
                return Err(beyond(
                    format!("{groups} work-groups in dimension {d}"),
                    format!("at most {MAX_GROUPS_PER_DIM} work-groups per dimension"),
                ));
            }
            total = total.saturating_mul(g);
        }
        if total > max_items {
            return Err(beyond(
                format!("global size {} ({total} work-items)", join(&self.global)),
                format!("at most {max_items} work-items"),
            ));
        }
        Ok(())
    }

    /// Checks dimensions and divisibility.
    pub fn validate(&self) -> Result<()> {
        let dims = self.global.len();
        if !(1..=3).contains(&dims) {
            return Err(nd_err(format!("{dims} dimensions; give 1 to 3")));
        }
        if self.local.len() != dims || self.offset.len() != dims {
            return Err(nd_err(format!(
                "global size has {dims} dimensions, local size {} and offset {}",
                self.local.len(),
                self.offset.len()
            )));
        }
        for d in 0..dims {
            if self.global[d] == 0 || self.local[d] == 0 {
                return Err(nd_err(format!("sizes in dimension {d} must be at least 1")));
            }
            if !self.global[d].is_multiple_of(self.local[d]) {
                return Err(nd_err(format!(
                    "global size {} is not a multiple of local size {} in dimension {d}",
                    self.global[d], self.local[d]
                )));
            }
            let end = self.global[d].checked_add(self.offset[d]);
            if end.is_none_or(|e| i64::try_from(e).is_err()) {
                return Err(nd_err(format!("sizes in dimension {d} are too large")));
            }
        }
        let groups = (0..dims).try_fold(1u64, |acc, d| {
            acc.checked_mul(self.global[d] / self.local[d])
        });
        if groups.is_none_or(|g| i64::try_from(g).is_err()) {
            return Err(nd_err("the number of work-groups is too large".into()));
        }
        Ok(())
    }

    /// Number of dimensions.
    pub fn work_dim(&self) -> u32 {
        self.global.len() as u32
    }

    /// Whether a kernel analyzed for `work_dim` dimensions may run on this
    /// NDRange: as many dimensions, or more whose extra trailing ones hold
    /// one work-item at offset 0 (`[n, 1]` for a 1-D kernel).
    pub fn fits_work_dim(&self, work_dim: u32) -> bool {
        let w = work_dim as usize;
        self.global.len() == w
            || (self.global.len() > w
                && self.global[w..].iter().all(|&g| g == 1)
                && self
                    .offset
                    .get(w..)
                    .is_none_or(|o| o.iter().all(|&x| x == 0)))
    }

    /// Work-groups along dimension `d` (1 beyond `work_dim`).
    pub fn n_groups(&self, d: u32) -> u64 {
        let d = d as usize;
        if d < self.global.len() {
            self.global[d] / self.local[d]
        } else {
            1
        }
    }

    /// Total number of work-groups.
    pub fn n_groups_total(&self) -> u64 {
        (0..self.work_dim()).map(|d| self.n_groups(d)).product()
    }

    /// `get_global_size(d)` as the kernel sees it (1 beyond `work_dim`).
    pub fn global_size(&self, d: u32) -> u64 {
        self.global.get(d as usize).copied().unwrap_or(1)
    }

    /// `get_local_size(d)` (1 beyond `work_dim`).
    pub fn local_size(&self, d: u32) -> u64 {
        self.local.get(d as usize).copied().unwrap_or(1)
    }

    /// `get_global_offset(d)` (0 beyond `work_dim`).
    pub fn global_offset(&self, d: u32) -> u64 {
        self.offset.get(d as usize).copied().unwrap_or(0)
    }
}

impl fmt::Display for NdRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let j = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join("x");
        write!(f, "global {} local {}", j(&self.global), j(&self.local))?;
        if self.offset.iter().any(|&o| o != 0) {
            write!(f, " offset {}", j(&self.offset))?;
        }
        Ok(())
    }
}

/// Parses device shares `IDX:SHARE,IDX:SHARE,...` (each share between 0
/// and 1), the syntax of `clpart run --split` and `clpart exec --split`.
pub fn parse_shares(text: &str) -> std::result::Result<Vec<(usize, f64)>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (i, s) = part
            .split_once(':')
            .ok_or_else(|| format!("entry '{part}' must be IDX:SHARE"))?;
        let i: usize = i
            .trim()
            .parse()
            .map_err(|_| format!("entry '{part}': '{i}' is not a device index"))?;
        let s: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("entry '{part}': '{s}' is not a number"))?;
        if !(0.0..=1.0).contains(&s) {
            return Err(format!("entry '{part}': share {s} is not between 0 and 1"));
        }
        out.push((i, s));
    }
    check_shares(&out, "device")?;
    Ok(out)
}

/// Checks a list of shares as every front door takes them: each
/// `holder` (a device, or a rank under mpirun) once, the shares summing to
/// 1 within 1e-6 (the one wording of these errors; whether an index names
/// a holder that exists is the caller's to check).
pub fn check_shares(shares: &[(usize, f64)], holder: &str) -> std::result::Result<(), String> {
    for (i, &(d, _)) in shares.iter().enumerate() {
        if shares[..i].iter().any(|&(e, _)| e == d) {
            return Err(format!("{holder} {d} is listed twice"));
        }
    }
    let sum: f64 = shares.iter().map(|s| s.1).sum();
    if (sum - 1.0).abs() > 1e-6 {
        return Err(format!("the shares sum to {sum}, not 1"));
    }
    Ok(())
}

/// Divides `n_groups` work-groups by `shares` (normally summing to 1; any
/// other finite non-negative weights are normalized first, and non-finite or
/// negative ones count as 0; if no share is positive, all count equally):
/// each share gets the floor of its exact part, and the remaining groups go
/// one each to the largest fractional parts (earlier shares win ties).
/// Returns the half-open slice `[lo, hi)` of each share, in order; a zero
/// share gets an empty slice. Time is linear in the number of shares,
/// whatever `n_groups`.
pub fn split_groups(n_groups: u64, shares: &[f64]) -> Vec<(u64, u64)> {
    if shares.is_empty() {
        return Vec::new();
    }
    let clean: Vec<f64> = shares
        .iter()
        .map(|&s| if s.is_finite() && s > 0.0 { s } else { 0.0 })
        .collect();
    // scaled by the largest so that the sum cannot overflow
    let max = clean.iter().copied().fold(0.0f64, f64::max);
    let weights: Vec<f64> = if max > 0.0 {
        clean.iter().map(|s| s / max).collect()
    } else {
        vec![1.0; shares.len()]
    };
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights
        .iter()
        .map(|w| w / total * n_groups as f64)
        .collect();
    let mut counts: Vec<u64> = exact
        .iter()
        .map(|e| (e.floor() as u64).min(n_groups))
        .collect();
    let assigned: u64 = counts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    order.sort_by(|&a, &b| {
        let fa = exact[a] - exact[a].floor();
        let fb = exact[b] - exact[b].floor();
        fb.partial_cmp(&fa)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    if assigned < n_groups {
        // fewer than one group per share is left, up to rounding: spread
        // it arithmetically, never one group at a time
        let left = n_groups - assigned;
        let n = order.len() as u64;
        let (each, extra) = (left / n, left % n);
        for (k, &i) in order.iter().enumerate() {
            counts[i] += each + u64::from((k as u64) < extra);
        }
    } else if assigned > n_groups {
        // only from rounding: take from the largest counts, largest first
        let mut over = assigned - n_groups;
        let mut by_size: Vec<usize> = (0..counts.len()).collect();
        by_size.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
        for i in by_size {
            let take = over.min(counts[i]);
            counts[i] -= take;
            over -= take;
            if over == 0 {
                break;
            }
        }
    }
    let mut lo = 0;
    counts
        .into_iter()
        .map(|c| {
            let s = (lo, lo + c);
            lo += c;
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(address_bits: u32) -> DeviceInfo {
        DeviceInfo {
            index: 0,
            platform: "p".into(),
            name: "d".into(),
            device_type: crate::runtime::DeviceType::Gpu,
            compute_units: 1,
            global_mem_bytes: 1 << 30,
            local_mem_bytes: 1 << 15,
            max_alloc_bytes: 1 << 28,
            max_work_group_size: 256,
            max_work_item_sizes: vec![256, 64, 1],
            address_bits,
        }
    }

    #[test]
    fn device_limits_are_checked_per_dimension_and_in_total() {
        let d = device(64);
        let check = |g: &[u64], l: &[u64]| {
            NdRange::new(g, l)
                .unwrap()
                .check_device(&d)
                .map_err(|e| e.to_string())
        };
        assert!(check(&[MAX_WORK_ITEMS - 3], &[4]).is_ok());
        assert!(check(&[1 << 20, 1 << 10], &[256, 1]).is_ok());
        let e = check(&[1 << 32], &[64]).unwrap_err();
        assert!(e.contains("global size 4294967296 in dimension 0"), "{e}");
        // each dimension within, the product not
        let e = check(&[1 << 20, 1 << 13], &[256, 1]).unwrap_err();
        assert!(e.contains("(8589934592 work-items)"), "{e}");
        let e = check(&[512, 2], &[256, 2]).unwrap_err();
        assert!(e.contains("at most 256 work-items in a work-group"), "{e}");
        let e = check(&[64, 128], &[1, 128]).unwrap_err();
        assert!(e.contains("at most 64 work-items in dimension 1"), "{e}");
        let e = check(&[1 << 31], &[1]).unwrap_err();
        assert!(e.contains("2147483648 work-groups in dimension 0"), "{e}");
        // a 32-bit size_t
        let e = NdRange::new(&[1 << 31], &[2])
            .unwrap()
            .check_device(&device(31))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 2147483647 work-items"), "{e}");
    }

    #[test]
    fn largest_remainder() {
        assert_eq!(split_groups(125, &[0.5, 0.5]), vec![(0, 63), (63, 125)]);
        assert_eq!(split_groups(125, &[0.86, 0.14]), vec![(0, 108), (108, 125)]);
        assert_eq!(split_groups(125, &[1.0, 0.0]), vec![(0, 125), (125, 125)]);
        assert_eq!(
            split_groups(10, &[1.0 / 3.0; 3]),
            vec![(0, 4), (4, 7), (7, 10)]
        );
        assert_eq!(split_groups(1, &[0.5, 0.5]), vec![(0, 1), (1, 1)]);
    }

    #[test]
    fn shares_parse_and_bad_entries_say_why() {
        assert_eq!(
            parse_shares("0:0.86, 1:0.14").unwrap(),
            vec![(0, 0.86), (1, 0.14)]
        );
        assert!(parse_shares("0").unwrap_err().contains("must be IDX:SHARE"));
        assert!(parse_shares("x:0.5")
            .unwrap_err()
            .contains("not a device index"));
        assert!(parse_shares("0:1.5")
            .unwrap_err()
            .contains("not between 0 and 1"));
    }

    #[test]
    fn default_local_divides_the_global_size() {
        assert_eq!(NdRange::default_local(&[1024]), vec![64]);
        assert_eq!(NdRange::default_local(&[1000, 7]), vec![50, 1]);
        assert_eq!(NdRange::default_local(&[97]), vec![1]);
        assert_eq!(NdRange::default_local(&[48, 64, 2]), vec![48, 1, 1]);
    }

    /// Shares that do not sum to 1 (or are not finite) used to
    /// loop once per group (hours for 2^40 groups) or leave groups unrun.
    #[test]
    fn unnormalized_shares_are_a_partition_without_a_step_per_group() {
        let n = 1u64 << 40;
        for shares in [
            vec![1.0, 1.0, 1.0],
            vec![1e-300, 1e-300],
            vec![3.0, 1.0],
            vec![f64::NAN, 1.0],
            vec![0.0, 0.0],
            vec![f64::INFINITY, 1.0],
            vec![-1.0, 2.0],
            vec![1e308, 1e308],
        ] {
            // 2^40 groups: one step per group would not finish
            let s = split_groups(n, &shares);
            assert_eq!(s.len(), shares.len());
            assert_eq!(s.first().unwrap().0, 0);
            assert_eq!(
                s.last().unwrap().1,
                n,
                "{shares:?}: every group is assigned"
            );
            assert!(
                s.windows(2).all(|w| w[0].1 == w[1].0),
                "{shares:?}: contiguous"
            );
        }
        assert_eq!(split_groups(8, &[3.0, 1.0]), vec![(0, 6), (6, 8)]);
        assert_eq!(split_groups(8, &[0.0, 0.0]), vec![(0, 4), (4, 8)]);
        assert_eq!(split_groups(8, &[f64::NAN, 1.0]), vec![(0, 0), (0, 8)]);
    }

    #[test]
    fn parse_and_validate() {
        assert_eq!(NdRange::parse_sizes("1024x768").unwrap(), vec![1024, 768]);
        assert_eq!(
            NdRange::new(&[1000], &[12]).unwrap_err().to_string(),
            "invalid ndrange: global size 1000 is not a multiple of local size 12 in dimension 0"
        );
    }
}
