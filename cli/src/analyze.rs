//! `clpart analyze`.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Emit {
    /// The coarsened C (one work-group as loops over local ids).
    Coarsened,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// The OpenCL C source file.
    pub file: PathBuf,
    /// The kernel to analyze (default: every kernel; for --emit coarsened, the first).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Print one stage's output instead of the report.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// Preprocessor options passed to clang (`-DNAME=VALUE`, `-IDIR`); repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    #[arg(short = 'I', value_name = "DIR")]
    pub includes: Vec<String>,
}

impl AnalyzeArgs {
    pub fn clang_args(&self) -> Vec<String> {
        let mut v: Vec<String> = self.defines.iter().map(|d| format!("-D{d}")).collect();
        v.extend(self.includes.iter().map(|i| format!("-I{i}")));
        v
    }
}

/// Reads a kernel source file with a clear error.
pub fn read_source(path: &PathBuf) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read '{}'", path.display()))
}

pub fn run(args: AnalyzeArgs) -> Result<u8> {
    let source = read_source(&args.file)?;
    let file = args.file.display().to_string();
    let options = coarsen::ParseOptions { clang_args: args.clang_args() };
    let program = coarsen::parse_program(&file, &source, &options)?;
    for d in &program.diagnostics {
        eprintln!("{d}");
    }
    let kernel = program.kernel(args.kernel.as_deref())?;
    match args.emit {
        Some(Emit::Coarsened) => {
            let c = coarsen::emit_c(&program, &kernel.name)?;
            print!("{c}");
        }
        None => {
            for k in program.kernels() {
                println!("kernel {}", k.name);
            }
        }
    }
    Ok(0)
}
