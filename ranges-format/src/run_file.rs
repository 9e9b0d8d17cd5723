//! The run file of `clpart steps`: an iterative program as a sequence of
//! launches over named buffers that stay on the devices.
//!
//! A run file is RON, written by hand:
//!
//! ```text
//! (
//!     source: "jacobi2d.cl",                      // relative to the run file
//!     buffers: [
//!         (name: "A", type: "float", init: "rand:65536:1"),
//!         (name: "B", type: "float", init: "rand:65536:1"),
//!     ],
//!     repeat: 10,                                 // the steps below, 10 times
//!     steps: [
//!         (kernel: "jacobi2d", global: [256, 256], local: [16, 16],
//!          args: {"src": "A", "dst": "B", "n": 256}),
//!         (kernel: "jacobi2d", global: [256, 256], local: [16, 16],
//!          args: {"src": "B", "dst": "A", "n": 256}, split: "0:0.7,1:0.3"),
//!     ],
//! )
//! ```
//!
//! Each step names a kernel of the source, its NDRange, and a value for
//! every kernel argument: the name of a buffer for a `__global` or
//! `__constant` pointer, a literal or `step` (the repetition counter, 0 to
//! `repeat - 1`) for a scalar, `local:N` for a `__local` pointer. The
//! buffer initializers are the argument spec language of `clpart run
//! --arg` (`rand:N[:SEED]`, `zeros:N`, `seq:N`, `file:PATH.npy`, the path
//! relative to the run file), or `size: N` for N zero elements.
//!
//! This module parses and checks what needs no kernel: the structure, the
//! names, the sizes. Whether the arguments fit the kernels is the caller's
//! check (it has the kernel signatures).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The keyword a scalar argument uses for the repetition counter.
pub const STEP_COUNTER: &str = "step";

/// A run file (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFile {
    /// The OpenCL C source, relative to the run file's folder.
    pub source: String,
    /// Preprocessor options for clang and the OpenCL compiler (`-DN=64`).
    #[serde(default)]
    pub build: Vec<String>,
    /// The buffers, created before the first step and kept to the end.
    pub buffers: Vec<BufferDecl>,
    /// How many times the steps run, in order (default 1).
    #[serde(default = "one")]
    pub repeat: u32,
    /// The launches of one repetition, in order.
    pub steps: Vec<Step>,
}

fn one() -> u32 {
    1
}

/// One buffer of a run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferDecl {
    /// The name steps bind it by.
    pub name: String,
    /// The OpenCL C element type (`float`, `int`, `float4`, ...).
    #[serde(rename = "type")]
    pub elem_type: String,
    /// Elements, all zero (give this or `init`).
    #[serde(default)]
    pub size: Option<u64>,
    /// The initial contents as an argument spec: `rand:N[:SEED]`,
    /// `zeros:N`, `seq:N` or `file:PATH.npy` (give this or `size`).
    #[serde(default)]
    pub init: Option<String>,
}

/// One launch of a run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The kernel, by name.
    pub kernel: String,
    /// The NDRange's global size, 1 to 3 dimensions.
    pub global: Vec<u64>,
    /// The work-group size (default: as `clpart run` chooses it).
    #[serde(default)]
    pub local: Option<Vec<u64>>,
    /// A value for every kernel argument, by argument name.
    #[serde(default)]
    pub args: BTreeMap<String, StepArg>,
    /// Device shares for this step, `IDX:SHARE,...` as `--split` takes them
    /// (default: the command line's).
    #[serde(default)]
    pub split: Option<String>,
}

/// The value a step gives one kernel argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepArg {
    /// An integer literal (`256`).
    Int(i64),
    /// A floating-point literal (`0.5`).
    Float(f64),
    /// A buffer name, a literal as text, `step`, or `local:N`.
    Text(String),
}

impl std::fmt::Display for StepArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepArg::Int(v) => write!(f, "{v}"),
            StepArg::Float(v) => write!(f, "{v:?}"),
            StepArg::Text(t) => f.write_str(t),
        }
    }
}

/// Errors of reading a run file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunFileError {
    /// Not well-formed RON, or a field missing, unknown or mistyped;
    /// `line` and `col` are 1-based.
    #[error("{line}:{col}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong, lower case.
        message: String,
    },
    /// Well-formed, but inconsistent (a name given twice, a size of 0, ...).
    #[error("{0}")]
    Invalid(String),
}

impl RunFile {
    /// Parses and checks a run file's text. `Option` fields may be written
    /// without `Some(...)`.
    pub fn parse(text: &str) -> Result<RunFile, RunFileError> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let file: RunFile = options.from_str(text).map_err(|e| {
            let mut message = lower_first(&e.code.to_string());
            if message.contains("untagged enum StepArg") {
                message = "an argument's value is a number or a string (a buffer name, a literal, \"step\" or \"local:N\")".into();
            }
            RunFileError::Syntax { line: e.span.start.line, col: e.span.start.col, message }
        })?;
        file.check()?;
        Ok(file)
    }

    /// The buffer called `name`.
    pub fn buffer(&self, name: &str) -> Option<&BufferDecl> {
        self.buffers.iter().find(|b| b.name == name)
    }

    /// The buffer names, comma separated (for messages).
    pub fn buffer_names(&self) -> String {
        self.buffers
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check(&self) -> Result<(), RunFileError> {
        let invalid = |m: String| Err(RunFileError::Invalid(m));
        if self.source.trim().is_empty() {
            return invalid("'source' is empty; give the kernel source file".into());
        }
        if self.steps.is_empty() {
            return invalid("'steps' is empty; give at least one launch".into());
        }
        if self.repeat == 0 {
            return invalid("'repeat' is 0; give at least 1".into());
        }
        let mut names = BTreeSet::new();
        for b in &self.buffers {
            let ident = !b.name.is_empty()
                && b.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !b.name.starts_with(|c: char| c.is_ascii_digit());
            if !ident {
                return invalid(format!(
                    "buffer name '{}' is not an identifier (letters, digits, '_')",
                    b.name
                ));
            }
            if b.name == STEP_COUNTER {
                return invalid(format!(
                    "buffer name '{STEP_COUNTER}' is reserved for the repetition counter"
                ));
            }
            if !names.insert(b.name.as_str()) {
                return invalid(format!("buffer '{}' is declared twice", b.name));
            }
            if b.elem_type.trim().is_empty() {
                return invalid(format!(
                    "buffer '{}': 'type' is empty; give an element type such as float",
                    b.name
                ));
            }
            match (b.size, &b.init) {
                (Some(_), Some(_)) => {
                    return invalid(format!("buffer '{}': give 'size' or 'init', not both", b.name))
                }
                (None, None) => {
                    return invalid(format!(
                        "buffer '{}': give 'size' (zeros) or 'init' (rand:N[:SEED], zeros:N, seq:N, file:PATH.npy)",
                        b.name
                    ))
                }
                (Some(0), None) => return invalid(format!("buffer '{}': 'size' is 0; give at least 1", b.name)),
                _ => {}
            }
        }
        for (i, s) in self.steps.iter().enumerate() {
            let at = format!("step {} (kernel '{}')", i + 1, s.kernel);
            if s.kernel.trim().is_empty() {
                return invalid(format!("step {}: 'kernel' is empty", i + 1));
            }
            if !(1..=3).contains(&s.global.len()) {
                return invalid(format!(
                    "{at}: 'global' has {} sizes; give 1 to 3",
                    s.global.len()
                ));
            }
            if let Some(l) = &s.local {
                if l.len() != s.global.len() {
                    return invalid(format!(
                        "{at}: 'local' has {} sizes and 'global' {}; give as many",
                        l.len(),
                        s.global.len()
                    ));
                }
            }
            for (name, v) in &s.args {
                if let StepArg::Text(t) = v {
                    if t.trim().is_empty() {
                        return invalid(format!("{at}: argument '{name}' is empty"));
                    }
                }
            }
        }
        Ok(())
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f
            .to_lowercase()
            .chain(c)
            .collect::<String>()
            .trim_end_matches('.')
            .to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
// comment
(
    source: "jacobi2d.cl",
    buffers: [
        (name: "A", type: "float", init: "rand:64:1"),
        (name: "B", type: "float", size: 64),
    ],
    repeat: 3,
    steps: [
        (kernel: "jacobi2d", global: [8, 8], local: [4, 4], args: {"src": "A", "dst": "B", "n": 8}),
        (kernel: "jacobi2d", global: [8, 8], args: {"src": "B", "dst": "A", "n": "8", "k": "step", "w": 0.5},
         split: "0:0.7,1:0.3"),
    ],
)
"#;

    #[test]
    fn parses_the_documented_form() {
        let f = RunFile::parse(GOOD).unwrap();
        assert_eq!(f.repeat, 3);
        assert_eq!(f.buffers[1].size, Some(64));
        assert_eq!(f.buffers[0].init.as_deref(), Some("rand:64:1"));
        assert_eq!(f.steps[0].local, Some(vec![4, 4]));
        assert_eq!(f.steps[1].local, None);
        assert_eq!(f.steps[0].args["n"], StepArg::Int(8));
        assert_eq!(f.steps[1].args["n"], StepArg::Text("8".into()));
        assert_eq!(f.steps[1].args["k"], StepArg::Text("step".into()));
        assert_eq!(f.steps[1].args["w"], StepArg::Float(0.5));
        assert_eq!(f.steps[1].split.as_deref(), Some("0:0.7,1:0.3"));
        assert_eq!(f.buffer_names(), "A, B");
    }

    #[test]
    fn repeat_defaults_to_one() {
        let f = RunFile::parse(&GOOD.replace("repeat: 3,", "")).unwrap();
        assert_eq!(f.repeat, 1);
    }

    fn error(text: &str) -> String {
        RunFile::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let e = error(&GOOD.replace("repeat: 3,", "repeat: 3,,"));
        assert!(e.starts_with("9:"), "{e}");
        let e = error(&GOOD.replace("repeat: 3,", "repaet: 3,"));
        assert!(e.contains("repaet"), "{e}");
        let e = error(&GOOD.replace("type: \"float\", size", "size"));
        assert!(e.contains("type"), "{e}");
        let e = error(&GOOD.replace("\"src\": \"A\"", "\"src\": Buffer(\"A\")"));
        assert!(
            e.contains("an argument's value is a number or a string"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_files_are_refused_naming_the_problem() {
        assert_eq!(
            error(&GOOD.replace("(name: \"B\"", "(name: \"A\"")),
            "buffer 'A' is declared twice"
        );
        assert!(
            error(&GOOD.replace("size: 64", "size: 64, init: \"zeros:64\"")).contains("not both")
        );
        assert!(error(&GOOD.replace("size: 64", "size: 0")).contains("'size' is 0"));
        assert!(error(&GOOD.replace("repeat: 3", "repeat: 0")).contains("'repeat' is 0"));
        assert!(error(&GOOD.replace("(name: \"B\"", "(name: \"step\"")).contains("reserved"));
        assert!(error(&GOOD.replace("(name: \"B\"", "(name: \"2B\"")).contains("not an identifier"));
        assert!(error(&GOOD.replace("local: [4, 4]", "local: [4]")).contains("'local' has 1 sizes"));
        assert!(
            error(&GOOD.replace("global: [8, 8], local", "global: [], local"))
                .contains("'global' has 0 sizes")
        );
        let no_steps = "(source: \"a.cl\", buffers: [], steps: [])";
        assert!(error(no_steps).contains("'steps' is empty"));
    }
}
