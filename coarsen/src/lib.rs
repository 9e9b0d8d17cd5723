//! coarsen
