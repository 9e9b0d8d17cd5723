//! `clpart completions <SHELL>`: the shell's completion script, made by
//! `clap_complete` from the command-line definition, on standard output.

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  clpart completions bash > ~/.local/share/bash-completion/completions/clpart\n  clpart completions zsh > ~/.zfunc/_clpart\n  clpart completions fish > ~/.config/fish/completions/clpart.fish"
)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: Shell,
}

pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> Result<u8> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "clpart", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(0)
}
