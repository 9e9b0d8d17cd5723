//! `clpart man`: the man page (roff), made by `clap_mangen` from the
//! command-line definition, on standard output.

use anyhow::{Context, Result};

pub fn man(command: clap::Command) -> Result<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .context("writing the man page")?;
    out!("{}", String::from_utf8_lossy(&page));
    Ok(0)
}
