//! access-analysis
