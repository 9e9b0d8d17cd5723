//! launcher
