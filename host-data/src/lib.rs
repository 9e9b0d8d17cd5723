//! `host-data`: the data a host program gives a kernel and takes back,
//! as the command line writes it.
//!
//! Argument specs (`spec.rs`: `NAME=SPEC` with `rand:N`, `zeros:N`,
//! `seq:N`, `file:PATH.npy`, literals, `local:N`, `bytes:HEX`; [`ArgSpec`],
//! [`parse_assignment`], [`Shape`], [`SplitMix64`]) made into a kernel's
//! arguments (`args.rs`: [`FromSpecs`] gives `KernelArgs::from_specs`,
//! [`PlanArgs`] gives `Plan::args_from_specs`), and buffers read from and
//! written to `.npy` files (`npy.rs`: [`read_npy`], [`write_npy`],
//! [`write_npy_to`]). Start with `spec.rs`'s module doc (the language).
//!
//! **Invariant:** the same spec gives the same bytes everywhere (`rand:`
//! is splitmix64 from its seed); what a `.npy` file claims is bounded
//! before it is believed. **Boundary:** it builds on the launcher's types
//! (`KernelArgs`, `HostBuffer`, `ElemType`, `LaunchError`) and the
//! launcher never on it: the launcher takes values, checked by name and
//! kind in `KernelArgs::from_named`. Its users are the front ends that
//! read specs and files (`clpart`, the bench, the tests).

mod args;
mod npy;
mod spec;

pub use args::{FromSpecs, PlanArgs};
pub use npy::{read_npy, write_npy, write_npy_to};
pub use spec::{parse_assignment, ArgSpec, Shape, SplitMix64, SPEC_KINDS};
