//! ranges-format
