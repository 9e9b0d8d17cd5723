//! Views of a guarded buffer through elements of another type ([`View`]):
//! how a view's elements relate to the parameter's ([`Scale`]) and the
//! widest view the guard's sink allows.

/// A pointer that views a guarded buffer through elements of another type:
/// a local `T *v = (T *)a;` that is never assigned again, or
/// an inline cast `((T *)a)[i]`. Its subscripts are checked in the
/// parameter's elements: a view element `m` times larger covers `m`
/// consecutive ones, one `m` times smaller is part of one.
#[derive(Clone, Debug)]
pub(super) struct View {
    /// The local pointer's name (the parameter's, for an inline cast).
    pub(super) name: String,
    /// Its element type's spelling.
    pub(super) pointee: String,
    pub(super) scale: Scale,
}

/// How a view's elements relate to the parameter's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scale {
    /// The same size: element `i` is element `i`.
    Same,
    /// View element `i` is parameter elements `m*i .. m*i + m - 1`.
    Wider(u32),
    /// View element `i` is part of parameter element `floor(i / m)`.
    Narrower(u32),
}

/// The widest view: a refused access goes to the sink at the first
/// multiple of `m` at or after the buffer's end, and its `m` elements must
/// fit in the sink's [`GUARD_SINK_ELEMENTS`].
const WIDEST_VIEW: u32 = 8;

/// Elements in the sink past each guarded buffer (the launcher's
/// `GUARD_SINK`, which must not be smaller).
const GUARD_SINK_ELEMENTS: u32 = 16;

// a refused access of the widest view ends at most `2m - 2` elements past
// the buffer's end
const _: () = assert!(2 * WIDEST_VIEW - 2 < GUARD_SINK_ELEMENTS);

pub(super) fn lcm(a: u32, b: u32) -> u32 {
    let gcd = |mut x: u32, mut y: u32| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b) * b
}

/// The scale of a view of `view`-byte elements over `param`-byte ones.
pub(super) fn scale_of(param: u32, view: u32) -> Option<Scale> {
    if param == 0 || view == 0 {
        None
    } else if param == view {
        Some(Scale::Same)
    } else if view % param == 0 && view / param <= WIDEST_VIEW {
        Some(Scale::Wider(view / param))
    } else if param % view == 0 {
        Some(Scale::Narrower(param / view))
    } else {
        None
    }
}
