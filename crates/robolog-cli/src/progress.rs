//! Progress bars for long work, on standard error and only when it is a terminal (never in
//! pipes, logs or tests).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::size::human_bytes;

/// A progress bar, or nothing when standard error is not a terminal.
#[derive(Debug)]
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// No bar.
    pub(crate) fn hidden() -> Self {
        Bar(None)
    }

    /// Counts messages, towards `total` when known.
    pub fn messages(what: &str, total: Option<u64>) -> Self {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let bar = match total {
            Some(total) => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                bar.set_style(style(
                    "{msg} [{bar:30}] {human_pos}/{human_len} messages{fetched}, {elapsed} (eta {eta})",
                ));
                bar
            }
            None => {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(style(
                    "{spinner} {msg} {human_pos} messages{fetched}, {elapsed}",
                ));
                bar
            }
        };
        bar.set_message(what.to_owned());
        Bar(Some(bar))
    }

    /// Work without a measure of progress (check, recover): a spinner with the elapsed time.
    pub(crate) fn spinner(what: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(style("{spinner} {msg}{fetched} {elapsed}"));
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(120));
        Bar(Some(bar))
    }

    /// Reading a remote object of `total` bytes front to back (check, recover): a bar of the
    /// bytes fetched, kept up to date while the work goes on.
    pub(crate) fn fetching(what: &str, total: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(style(
            "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} fetched ({binary_bytes_per_sec}), {elapsed} (eta {eta})",
        ));
        bar.set_message(what.to_owned());
        // The work fetches on other threads: this one copies the count into the bar until the
        // bar is finished (dropped).
        let start = robolog::remote::fetched_total().bytes;
        let watched = bar.clone();
        std::thread::spawn(move || {
            while !watched.is_finished() {
                let fetched = robolog::remote::fetched_total().bytes - start;
                watched.set_position(fetched.min(total));
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Bar(Some(bar))
    }

    /// Sets the position.
    pub fn set(&self, position: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(position);
        }
    }

    /// Sets the total, once known.
    pub fn set_total(&self, total: u64) {
        if let Some(bar) = &self.0 {
            bar.set_length(total);
        }
    }

    /// Removes the bar, leaving the terminal as it was.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `{fetched}` in a template: what reading URLs has fetched so far (nothing for local files).
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
        .with_key(
            "fetched",
            |_: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let fetched = robolog::remote::fetched_total();
                if fetched.requests > 0 {
                    let _ = write!(
                        out,
                        ", {} fetched in {} requests",
                        human_bytes(fetched.bytes),
                        fetched.requests
                    );
                }
            },
        )
}
