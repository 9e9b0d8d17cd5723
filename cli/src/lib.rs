//! The reports of the `clpart` binary, as a library so that tests can make
//! them from golden range files: the JSON report (`report`) and the
//! pictures (`svg`). The human report is `partitioner::report`.

pub mod report;
pub mod svg;
