//! Progress on a terminal: a spinner on stderr for work that lasts longer
//! than [`DELAY`], nothing at all when stderr is not a terminal (pipes,
//! files, tests), so results on stdout and diagnostics stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Work shorter than this shows no progress.
pub const DELAY: Duration = Duration::from_millis(500);

/// A spinner shown after [`DELAY`] if the work is still going; cleared when
/// dropped.
pub struct Progress {
    bar: Option<Arc<Mutex<Option<ProgressBar>>>>,
}

impl Progress {
    /// Starts timing `message`; shows it only on a terminal, after
    /// [`DELAY`], and neither with `--quiet` nor with `--color never`
    /// (the spinner redraws its line with escape sequences).
    pub fn start(message: impl Into<String>) -> Progress {
        if !std::io::stderr().is_terminal()
            || crate::terminal::quiet()
            || crate::terminal::no_escapes()
        {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(message.into());
        let shared = Arc::new(Mutex::new(Some(bar)));
        let later = Arc::clone(&shared);
        std::thread::spawn(move || {
            std::thread::sleep(DELAY);
            if let Ok(guard) = later.lock() {
                if let Some(b) = guard.as_ref() {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.enable_steady_tick(Duration::from_millis(100));
                }
            }
        });
        Progress { bar: Some(shared) }
    }

    /// Changes the message (e.g. `launch 3 of 10`).
    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(b) = self
            .bar
            .as_ref()
            .and_then(|m| m.lock().ok())
            .as_ref()
            .and_then(|g| g.as_ref().cloned())
        {
            b.set_message(message.into());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(m) = &self.bar {
            if let Ok(mut g) = m.lock() {
                if let Some(b) = g.take() {
                    b.finish_and_clear();
                }
            }
        }
    }
}
