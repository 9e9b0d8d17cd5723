//! C API
