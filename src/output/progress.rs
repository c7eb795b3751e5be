//! The progress bar on stderr while logs are read: an [`ingest::Progress`]
//! drawn with indicatif. The options layer attaches it on a terminal unless
//! `--quiet`; ingestion only reports to it.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ingest;
use crate::text::escape;

/// A bar of bytes read, with the input being read as its message.
#[derive(Debug, Default)]
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
}

impl Bar {
    fn with(&self, f: impl FnOnce(&ProgressBar)) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = bar.as_ref() {
            f(bar);
        }
    }
}

impl ingest::Progress for Bar {
    fn start(&self, total_bytes: u64) {
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}")
                .expect("valid progress template"),
        );
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    }

    fn input(&self, name: &str) {
        self.with(|bar| bar.set_message(escape::terminal(name).into_owned()));
    }

    fn advance(&self, bytes_read: u64) {
        self.with(|bar| bar.set_position(bytes_read));
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}
