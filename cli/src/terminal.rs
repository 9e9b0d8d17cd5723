//! What goes to standard error besides results, and how: the global flags
//! `--quiet`, `--verbose` and `--color`, set once in `main`, and the one
//! printer of errors and notes that every subcommand (and clap's own
//! errors) goes through, so that all read `clpart: error: ...` on one line.

use clap::builder::styling::{AnsiColor, Style};
use clap::ColorChoice;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// The global flags that shape standard error.
#[derive(Clone, Copy, Debug)]
pub struct Terminal {
    /// No progress and no notes (errors still).
    pub quiet: bool,
    /// The details a subcommand has beyond its usual output.
    pub verbose: bool,
    /// Escape sequences (colors, the progress spinner) on standard error.
    pub color: ColorChoice,
}

static TERMINAL: OnceLock<Terminal> = OnceLock::new();

/// Sets the flags for the rest of the process (the first call wins).
pub fn set(t: Terminal) {
    let _ = TERMINAL.set(t);
}

fn get() -> Terminal {
    TERMINAL.get().copied().unwrap_or(Terminal {
        quiet: false,
        verbose: false,
        color: ColorChoice::Auto,
    })
}

pub fn quiet() -> bool {
    get().quiet
}

pub fn verbose() -> bool {
    get().verbose
}

/// `--color never`: no escape sequence at all on standard error.
pub fn no_escapes() -> bool {
    get().color == ColorChoice::Never
}

/// Whether standard error may hold escape sequences: `--color always`,
/// or `auto` on a terminal without `NO_COLOR` set.
pub fn stderr_styled() -> bool {
    styled(get().color)
}

/// [`stderr_styled`] for `choice`.
pub fn styled(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    }
}

/// The `--color` choice in `args` before clap reads them (clap's own help
/// and errors are styled while it parses): the last `--color WHEN` or
/// `--color=WHEN` before a `--`; `auto` when there is none or it is not
/// a valid choice (clap then reports it).
pub fn color_in_args(args: &[std::ffi::OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut it = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(a) = it.next() {
        let value = match a.as_ref() {
            "--" => break,
            "--color" => it.next().map(|v| v.into_owned()),
            s => s.strip_prefix("--color=").map(str::to_string),
        };
        match value.as_deref() {
            Some("always") => choice = ColorChoice::Always,
            Some("never") => choice = ColorChoice::Never,
            Some("auto") => choice = ColorChoice::Auto,
            _ => {}
        }
    }
    choice
}

/// Prints `clpart: error: {message}` on standard error, `error:` in bold
/// red where styles are allowed.
pub fn error(message: &str) {
    let style = if stderr_styled() {
        AnsiColor::Red.on_default().bold()
    } else {
        Style::new()
    };
    eprintln!(
        "clpart: {}error:{} {message}",
        style.render(),
        style.render_reset()
    );
}

/// Prints `clpart: note: {message}` on standard error, unless `--quiet`.
pub fn note(message: &str) {
    if !quiet() {
        eprintln!("clpart: note: {message}");
    }
}

/// A line of progress or information for people (`wrote FILE`, the
/// parser's warnings), unless `--quiet`.
pub fn info(message: &str) {
    if !quiet() {
        eprintln!("{message}");
    }
}

/// clap's error as one `clpart: error:` line: its message (with the
/// indented lines that continue it, such as the arguments missing), then
/// its tips and the usage, separated by `; `.
pub fn clap_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().map_or("invalid arguments", str::trim);
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let mut parts = Vec::new();
    for raw in lines {
        let l = raw.trim();
        if let Some(tip) = l.strip_prefix("tip: ") {
            parts.push(format!("tip: {tip}"));
        } else if let Some(usage) = l.strip_prefix("Usage: ") {
            parts.push(format!("usage: {usage}"));
        } else if raw.starts_with(char::is_whitespace) && parts.is_empty() {
            let joined = message.ends_with(':') || l.starts_with('[');
            message.push_str(if joined { " " } else { ", " });
            message.push_str(l);
        }
    }
    parts.insert(0, message);
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_color_choice_is_read_before_clap_up_to_a_double_dash() {
        let args = |v: &[&str]| {
            v.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(
            color_in_args(&args(&["clpart", "--color", "never", "devices"])),
            ColorChoice::Never
        );
        assert_eq!(
            color_in_args(&args(&["clpart", "devices", "--color=always"])),
            ColorChoice::Always
        );
        assert_eq!(
            color_in_args(&args(&["clpart", "exec", "--", "app", "--color=never"])),
            ColorChoice::Auto
        );
    }
}
