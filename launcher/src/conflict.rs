//! The run-time check of a checked merge (an array whose writes the
//! analysis could not prove disjoint between slices,
//! [`ranges_format::ArrayRanges::checked`]): each device's copy of the
//! array started from the original values; an element a device changed
//! takes that value, which is exact unless two devices changed one element
//! to different values, or a device changed an element that another one
//! read (in one device's run that read may have seen the write). Either is
//! a conflict: the launch's results are discarded and it runs unsplit.
//! Several devices writing the same value (a level in a breadth-first
//! search, a flag) merge.

use crate::runs::Runs;

/// One device's copy of an array, as the merge sees it.
pub(crate) struct CopyPart<'a> {
    /// The device's index (for the message).
    pub(crate) device: usize,
    /// The element `staged` starts at.
    pub(crate) lo: i64,
    /// The device's copy of elements `lo ..`, little-endian bytes.
    pub(crate) staged: &'a [u8],
    /// The elements the device holds as written (those it may have
    /// changed; it holds the original values at those it did not).
    pub(crate) written: Runs,
    /// The elements the device's slice may read.
    pub(crate) read: Runs,
}

/// Element `k` of a device's copy.
fn elem<'a>(p: &CopyPart<'a>, k: i64, es: usize) -> &'a [u8] {
    &p.staged[(k - p.lo) as usize * es..][..es]
}

/// The first conflict between the copies of array `name` (elements of
/// `es` bytes; `original` holds elements `gl ..`), described for the
/// report; `None` when the copies merge exactly.
pub(crate) fn first_conflict(
    name: &str,
    es: usize,
    gl: i64,
    original: &[u8],
    parts: &[CopyPart<'_>],
) -> Option<String> {
    let n = original.len() / es;
    // which part changed each element first
    let mut owner: Vec<Option<usize>> = vec![None; n];
    for (pi, p) in parts.iter().enumerate() {
        let held = p.written.intersect(&Runs::interval(gl, gl + n as i64 - 1));
        for &(l, u) in held.intervals() {
            for k in l..=u {
                let v = elem(p, k, es);
                let o = &original[(k - gl) as usize * es..][..es];
                if v == o {
                    continue;
                }
                let slot = &mut owner[(k - gl) as usize];
                match *slot {
                    None => *slot = Some(pi),
                    Some(q) if elem(&parts[q], k, es) != v => {
                        return Some(format!(
                            "devices {} and {} wrote different values to element {k} of '{name}'",
                            parts[q].device, p.device
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    for p in parts {
        let read = p.read.intersect(&Runs::interval(gl, gl + n as i64 - 1));
        for &(l, u) in read.intervals() {
            for k in l..=u {
                if let Some(q) = owner[(k - gl) as usize].filter(|&q| parts[q].device != p.device) {
                    return Some(format!(
                        "device {} changed element {k} of '{name}', which device {} may have read",
                        parts[q].device, p.device
                    ));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn part(
        device: usize,
        staged: &[u8],
        written: (i64, i64),
        read: Option<(i64, i64)>,
    ) -> CopyPart<'_> {
        CopyPart {
            device,
            lo: 0,
            staged,
            written: Runs::interval(written.0, written.1),
            read: read.map_or_else(Runs::new, |(l, u)| Runs::interval(l, u)),
        }
    }

    #[test]
    fn disjoint_changes_and_equal_values_merge() {
        let orig = bytes(&[0, 0, 0, 0]);
        let a = bytes(&[5, 0, 7, 0]);
        let b = bytes(&[0, 6, 7, 0]);
        let parts = [part(0, &a, (0, 3), None), part(1, &b, (0, 3), None)];
        assert_eq!(first_conflict("out", 4, 0, &orig, &parts), None);
    }

    #[test]
    fn different_values_to_one_element_conflict() {
        let orig = bytes(&[0, 0, 0, 0]);
        let a = bytes(&[5, 0, 7, 0]);
        let b = bytes(&[0, 0, 8, 0]);
        let parts = [part(0, &a, (0, 3), None), part(2, &b, (0, 3), None)];
        assert_eq!(
            first_conflict("out", 4, 0, &orig, &parts).as_deref(),
            Some("devices 0 and 2 wrote different values to element 2 of 'out'")
        );
    }

    #[test]
    fn an_element_changed_where_another_device_read_conflicts() {
        let orig = bytes(&[1, 1, 1, 1]);
        // device 0 reads 0..1 and changes 3; device 1 reads 2..3, changes 0
        let a = bytes(&[1, 1, 1, 2]);
        let b = bytes(&[2, 1, 1, 1]);
        let parts = [
            part(0, &a, (0, 3), Some((0, 1))),
            part(1, &b, (0, 3), Some((2, 3))),
        ];
        assert_eq!(
            first_conflict("cost", 4, 0, &orig, &parts).as_deref(),
            Some("device 1 changed element 0 of 'cost', which device 0 may have read")
        );
        // a device reading what it changed itself is no conflict
        let b = bytes(&[1, 1, 2, 1]);
        let parts = [
            part(0, &a, (0, 3), Some((0, 1))),
            part(1, &b, (0, 3), Some((2, 2))),
        ];
        assert_eq!(first_conflict("cost", 4, 0, &orig, &parts), None);
    }

    #[test]
    fn only_the_written_elements_count() {
        // device 1 holds element 0 unwritten (not its write set): its
        // stale bytes there are not a change
        let orig = bytes(&[0, 0]);
        let a = bytes(&[3, 0]);
        let b = bytes(&[9, 4]);
        let parts = [part(0, &a, (0, 1), None), part(1, &b, (1, 1), None)];
        assert_eq!(first_conflict("out", 4, 0, &orig, &parts), None);
    }
}
