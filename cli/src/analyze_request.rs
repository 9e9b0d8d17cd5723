//! `clpart analyze-request` (hidden): one analysis the OpenCL layer asks
//! for, its request (`ranges_format::AnalysisRequest`) on standard input
//! and the range file on standard output, answered here
//! (`session::answer`) so that libclang never runs in the application's
//! process. The analysis reaches the persistent cache before the answer is
//! written: an application that exits first still leaves it for its next
//! run.

use std::io::{Read, Write};

use anyhow::{anyhow, Context, Result};
use clap::Args;

#[derive(Args)]
pub struct AnalyzeRequestArgs {}

pub fn run(_: AnalyzeRequestArgs) -> Result<u8> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the request")?;
    let request =
        ranges_format::AnalysisRequest::from_text(&text, "the request").map_err(|e| anyhow!(e))?;
    // the argument list reaches the cache too (a later run reads both)
    let file = session::answer(&request)?;
    let text = file.to_ron_string()?;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the ranges")?;
    Ok(0)
}
