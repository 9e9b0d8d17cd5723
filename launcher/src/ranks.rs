//! What an MPI rank holds of a launch split across ranks: the
//! types of [`crate::Plan::rank_slices`], computed by the same schedule as
//! a launch across devices (a rank is one more kind of holder). No MPI
//! here: the `mpi-ranks` crate moves the elements.

use crate::runs::Runs;

/// Per array of a plan, what one slice of an MPI rank must hold
/// before it runs and holds written after ([`Plan::rank_slices`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceSets {
    /// The buffer argument.
    pub arg_index: u32,
    /// The array's name.
    pub name: String,
    /// Bytes of one element.
    pub elem_size: u64,
    /// Elements that must be valid on the rank before it runs: what the
    /// slice reads, and the written elements whose writes may not happen
    /// (they must hold their current values).
    pub need: Runs,
    /// Elements the slice writes (valid on the rank only, afterwards).
    pub write: Runs,
}

/// How a launch divides across MPI ranks ([`Plan::rank_slices`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankSlices {
    /// Per window (in order), per array of the plan, the sets.
    Split(Vec<Vec<SliceSets>>),
    /// The launch cannot divide (why); it runs whole in one process.
    Unsplit(String),
}
