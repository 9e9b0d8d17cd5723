//! `clpart include-request` (hidden): a program's source with its
//! `#include`d files written in, as the preprocessor resolves them from
//! this process's working directory and the build options given as
//! arguments (`coarsen::with_includes_written_in`). The OpenCL layer asks
//! for it at each `clBuildProgram` of a source that includes files, in
//! the application's working directory, so that libclang never runs in
//! the application's process. The source is read on standard input, the
//! result written on standard output.

use std::io::Write;

use anyhow::{anyhow, Context, Result};
use clap::Args;

#[derive(Args)]
pub struct IncludeRequestArgs {
    /// The build options of the program, as the application gave them.
    #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
    options: Vec<String>,
}

pub fn run(args: IncludeRequestArgs) -> Result<u8> {
    let bytes = ranges_format::input::read_to_limit(std::io::stdin(), ranges_format::input::SOURCE)
        .context("reading the source")?;
    let source = String::from_utf8(bytes).context("reading the source: not valid utf-8")?;
    let parse = coarsen::ParseOptions {
        clang_args: args.options,
    };
    let text =
        coarsen::with_includes_written_in("program.cl", &source, &parse).map_err(|e| anyhow!(e))?;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the source")?;
    Ok(0)
}
