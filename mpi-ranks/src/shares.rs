//! How a launch's work-groups divide among the ranks: the shares the user
//! gives (`--split` names ranks under `mpirun`) or measured ones.

use crate::RankLaunch;

/// The rank shares of `split` over `n_ranks` ranks: `IDX:SHARE,...` (ranks
/// not named get nothing), or `auto` (even at first; the bool says
/// automatic) or nothing (even).
pub fn rank_shares(split: Option<&str>, n_ranks: usize) -> Result<(Vec<f64>, bool), String> {
    match split.map(str::trim) {
        Some("auto") | None => Ok((vec![1.0 / n_ranks as f64; n_ranks], split.is_some())),
        Some(s) => {
            let sh = launcher::parse_shares(s).map_err(|e| format!("--split {e}"))?;
            let mut v = vec![0.0; n_ranks];
            for (r, x) in sh {
                if r >= n_ranks {
                    return Err(format!("--split '{s}': rank {r} does not exist (ranks: 0 to {}; under mpirun shares name ranks)", n_ranks - 1));
                }
                v[r] += x;
            }
            Ok((v, false))
        }
    }
}

/// `auto` across ranks: each rank's share in proportion to the
/// work-groups per ms of its last window (ranks without a measurement keep
/// their share).
pub fn rebalance(shares: &mut [f64], ranks: &[RankLaunch]) {
    let rates: Vec<Option<f64>> = ranks
        .iter()
        .map(|r| (r.work_groups > 0 && r.wall_ms > 0.0).then(|| r.work_groups as f64 / r.wall_ms))
        .collect();
    if rates.iter().any(Option::is_none) {
        return;
    }
    let total: f64 = rates.iter().flatten().sum();
    if total > 0.0 {
        for (s, r) in shares.iter_mut().zip(&rates) {
            *s = r.unwrap_or(0.0) / total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_name_ranks() {
        assert_eq!(rank_shares(None, 2).unwrap(), (vec![0.5, 0.5], false));
        assert_eq!(rank_shares(Some("auto"), 4).unwrap().1, true);
        assert_eq!(
            rank_shares(Some("0:0.25,2:0.75"), 3).unwrap().0,
            vec![0.25, 0.0, 0.75]
        );
        let e = rank_shares(Some("0:0.5,3:0.5"), 2).unwrap_err();
        assert!(e.contains("rank 3 does not exist"), "{e}");
    }

    #[test]
    fn measured_rates_set_the_shares() {
        let l = |wg, ms| RankLaunch {
            work_groups: wg,
            wall_ms: ms,
            ..Default::default()
        };
        let mut s = vec![0.5, 0.5];
        rebalance(&mut s, &[l(10, 1.0), l(10, 3.0)]);
        assert!(
            (s[0] - 0.75).abs() < 1e-9 && (s[1] - 0.25).abs() < 1e-9,
            "{s:?}"
        );
        // a rank without a window keeps the shares as they were
        rebalance(&mut s, &[l(10, 1.0), l(0, 0.0)]);
        assert!((s[0] - 0.75).abs() < 1e-9);
    }
}
