//! partitioner
