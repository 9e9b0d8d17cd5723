//! One analysis asked of another process: what the OpenCL layer hands to
//! `clpart analyze-request` (on its standard input) so that libclang never runs inside the
//! application's process (a library's static destructors run at the
//! application's exit, while a parse may still be using them). The answer
//! is a [`crate::RangeFile`] of the one kernel (on its standard output).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An analysis of one kernel for every launch of one kind: parametric in
/// the NDRange sizes and the scalar arguments but those in `only`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalysisRequest {
    /// The source's name in messages and cache keys.
    pub file: String,
    /// The kernel source, as the application gave it.
    pub source: String,
    /// The application's build options, split at white space.
    pub build_options: Vec<String>,
    /// The kernel's name.
    pub kernel: String,
    /// The launches' number of dimensions (1 to 3).
    pub work_dim: u32,
    /// The work-group size per dimension; empty: any (parametric).
    pub local: Vec<u64>,
    /// The values specialized on, by name (`gs0`, `ng0`, a scalar's name).
    pub only: BTreeMap<String, i64>,
    /// The work-group size of the launch that asked (the one clpart picks
    /// when the application gave none): what the process answering warms
    /// the driver's compiles for. Empty: `local`.
    #[serde(default)]
    pub launch_local: Vec<u64>,
}

impl AnalysisRequest {
    /// The request as text (RON).
    pub fn to_text(&self) -> Result<String, String> {
        ron::to_string(self).map_err(|e| e.to_string())
    }

    /// Reads a request written by [`AnalysisRequest::to_text`]; `what`
    /// names its origin in the error.
    pub fn from_text(text: &str, what: &str) -> Result<AnalysisRequest, String> {
        ron::from_str(text).map_err(|e| format!("{what}: {e}"))
    }

    /// Several requests as one text.
    pub fn list_to_text(requests: &[AnalysisRequest]) -> Result<String, String> {
        ron::to_string(requests).map_err(|e| e.to_string())
    }

    /// Reads requests written by [`AnalysisRequest::list_to_text`]; `what`
    /// names their origin in the error.
    pub fn list_from_text(text: &str, what: &str) -> Result<Vec<AnalysisRequest>, String> {
        ron::from_str(text).map_err(|e| format!("{what}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_written() {
        let r = AnalysisRequest {
            file: "k.cl".into(),
            source: "__kernel void k(__global int *a, int n) { a[get_global_id(0)] = n; }".into(),
            build_options: vec!["-DN=4".into(), "-I.".into()],
            kernel: "k".into(),
            work_dim: 2,
            local: vec![16, 4],
            only: BTreeMap::from([("n".to_string(), 64), ("gs0".to_string(), 1024)]),
            launch_local: vec![16, 4],
        };
        let text = r.to_text().unwrap();
        assert_eq!(AnalysisRequest::from_text(&text, "stdin").unwrap(), r);
        assert!(AnalysisRequest::from_text("(file: 3)", "stdin")
            .unwrap_err()
            .starts_with("stdin: "));
        let list = AnalysisRequest::list_to_text(&[r.clone(), r.clone()]).unwrap();
        assert_eq!(
            AnalysisRequest::list_from_text(&list, "stdin").unwrap(),
            [r.clone(), r]
        );
    }
}
