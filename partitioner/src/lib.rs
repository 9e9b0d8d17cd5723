//! partitioner

pub mod args;
pub mod ehrhart;
pub mod subkernel;
