//! The merge of an array updated only by atomics (a reduction,
//! [`ranges_format::Reduction`]): each device updated a whole copy that
//! started from the original values; the result is, per element, what one
//! device applying every update gives.
//!
//! - sum (`atomic_add`, `_sub`, `_inc`, `_dec`): the original plus each
//!   device's change, in wrapping integer arithmetic;
//! - min, max: the least (greatest) of the copies, as signed or unsigned
//!   integers;
//! - and, or: the AND (OR) of the copies;
//! - xor: the original XOR each device's change (`copy ^ original`).
//!
//! Each is exact whatever the order of the devices: wrapping addition,
//! min, max, AND, OR and XOR are associative and commutative, and every
//! copy already holds the original folded in.

use ranges_format::{ReduceOp, Reduction};

/// Folds one device's copy into the merged value `acc` of one element,
/// all little-endian bytes of one element of 4 or 8 bytes: `acc` starts as
/// the original, and every device's copy is folded in once.
pub(crate) fn fold(r: Reduction, acc: &mut [u8], copy: &[u8], original: &[u8]) {
    match acc.len() {
        4 => {
            let get = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
            let v = fold_u32(r, get(acc), get(copy), get(original));
            acc.copy_from_slice(&v.to_le_bytes());
        }
        8 => {
            let get = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
            let v = fold_u64(r, get(acc), get(copy), get(original));
            acc.copy_from_slice(&v.to_le_bytes());
        }
        // (the range file's validation allows only 4- and 8-byte elements)
        n => unreachable!("a reduction over {n}-byte elements"),
    }
}

fn fold_u32(r: Reduction, acc: u32, copy: u32, original: u32) -> u32 {
    match r.op {
        ReduceOp::Sum => acc.wrapping_add(copy.wrapping_sub(original)),
        ReduceOp::Min if r.signed => (acc as i32).min(copy as i32) as u32,
        ReduceOp::Max if r.signed => (acc as i32).max(copy as i32) as u32,
        ReduceOp::Min => acc.min(copy),
        ReduceOp::Max => acc.max(copy),
        ReduceOp::And => acc & copy,
        ReduceOp::Or => acc | copy,
        ReduceOp::Xor => acc ^ copy ^ original,
    }
}

fn fold_u64(r: Reduction, acc: u64, copy: u64, original: u64) -> u64 {
    match r.op {
        ReduceOp::Sum => acc.wrapping_add(copy.wrapping_sub(original)),
        ReduceOp::Min if r.signed => (acc as i64).min(copy as i64) as u64,
        ReduceOp::Max if r.signed => (acc as i64).max(copy as i64) as u64,
        ReduceOp::Min => acc.min(copy),
        ReduceOp::Max => acc.max(copy),
        ReduceOp::And => acc & copy,
        ReduceOp::Or => acc | copy,
        ReduceOp::Xor => acc ^ copy ^ original,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn red(op: ReduceOp, signed: bool) -> Reduction {
        Reduction { op, signed }
    }

    /// The merge of devices' copies of one 4-byte element.
    fn merged32(r: Reduction, original: u32, copies: &[u32]) -> u32 {
        let mut acc = original.to_le_bytes();
        for c in copies {
            fold(r, &mut acc, &c.to_le_bytes(), &original.to_le_bytes());
        }
        u32::from_le_bytes(acc)
    }

    fn merged64(r: Reduction, original: u64, copies: &[u64]) -> u64 {
        let mut acc = original.to_le_bytes();
        for c in copies {
            fold(r, &mut acc, &c.to_le_bytes(), &original.to_le_bytes());
        }
        u64::from_le_bytes(acc)
    }

    /// Applies `updates` to `original` one after the other, as one device does.
    fn serial(original: u32, updates: &[u32], f: impl Fn(u32, u32) -> u32) -> u32 {
        updates.iter().fold(original, |a, &u| f(a, u))
    }

    /// Each device applies its share of the updates to the original; the
    /// merge of the copies equals one device applying them all.
    fn check_split(r: Reduction, original: u32, updates: &[u32], f: impl Fn(u32, u32) -> u32) {
        let whole = serial(original, updates, &f);
        for n_devices in 1..=3 {
            let chunk = updates.len().div_ceil(n_devices).max(1);
            let copies: Vec<u32> = updates
                .chunks(chunk)
                .map(|part| serial(original, part, &f))
                .collect();
            assert_eq!(
                merged32(r, original, &copies),
                whole,
                "{:?} over {n_devices} devices",
                r
            );
        }
    }

    #[test]
    fn sum_adds_each_devices_change_with_wrapping() {
        let r = red(ReduceOp::Sum, false);
        // original 10: one device added 5, the other 7
        assert_eq!(merged32(r, 10, &[15, 17]), 22);
        // a device that changed nothing adds nothing
        assert_eq!(merged32(r, 10, &[10, 10, 13]), 13);
        // wraps past u32::MAX like the atomics on one device: +1 and +2
        assert_eq!(merged32(r, u32::MAX - 1, &[u32::MAX, 0]), 1);
        // atomic_dec below zero wraps too: -1 and -2 from 1
        assert_eq!(merged32(r, 1, &[0, u32::MAX]), u32::MAX - 1);
        check_split(r, 7, &[3, u32::MAX, 1 << 31, 1 << 31, 9], u32::wrapping_add);
        // +1 and +2 past u64::MAX
        assert_eq!(merged64(r, u64::MAX, &[0, 1]), 2);
    }

    #[test]
    fn min_and_max_compare_as_the_element_type() {
        let neg = |v: i32| v as u32;
        // signed: -5 is less than 3
        assert_eq!(
            merged32(red(ReduceOp::Min, true), 3, &[neg(-5), 3]),
            neg(-5)
        );
        assert_eq!(
            merged32(red(ReduceOp::Max, true), neg(-1), &[neg(-7), 4]),
            4
        );
        // unsigned: 0xffff_fffb is greater than 3
        assert_eq!(merged32(red(ReduceOp::Min, false), 3, &[neg(-5), 3]), 3);
        assert_eq!(
            merged32(red(ReduceOp::Max, false), 3, &[neg(-5), 3]),
            neg(-5)
        );
        check_split(
            red(ReduceOp::Min, true),
            100,
            &[neg(-3), 50, 7, neg(-90)],
            |a, u| (a as i32).min(u as i32) as u32,
        );
        check_split(red(ReduceOp::Max, false), 100, &[neg(-3), 50, 7], u32::max);
        assert_eq!(
            merged64(red(ReduceOp::Min, true), 0, &[(-2i64) as u64, 5]),
            (-2i64) as u64
        );
        assert_eq!(
            merged64(red(ReduceOp::Max, false), 0, &[(-2i64) as u64, 5]),
            (-2i64) as u64
        );
    }

    #[test]
    fn and_or_xor_combine_the_copies_bits() {
        check_split(
            red(ReduceOp::And, false),
            0xffff_ff0f,
            &[0xf0f0_ffff, 0xffff_fff3, 0x7fff_ffff],
            |a, u| a & u,
        );
        check_split(
            red(ReduceOp::Or, true),
            0x10,
            &[0x1, 0x100, 0x8000_0000],
            |a, u| a | u,
        );
        // xor: a bit flipped on two devices flips back
        assert_eq!(
            merged32(red(ReduceOp::Xor, false), 0b1010, &[0b1011, 0b1011]),
            0b1010
        );
        check_split(
            red(ReduceOp::Xor, false),
            0xdead_beef,
            &[1, 1 << 31, 0xff, 0xff, 6],
            |a, u| a ^ u,
        );
        assert_eq!(
            merged64(red(ReduceOp::Xor, true), 1 << 40, &[(1 << 40) | 1, 1 << 40]),
            (1 << 40) | 1
        );
        assert_eq!(
            merged64(red(ReduceOp::Or, false), 0, &[1 << 63, 1]),
            (1 << 63) | 1
        );
        assert_eq!(merged64(red(ReduceOp::And, false), u64::MAX, &[!1, !2]), !3);
    }
}
