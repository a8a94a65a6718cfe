//! The progress bar every long command shows: elapsed time, done of planned in its unit, ETA.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` of `unit` (e.g. "samples", "connections", "s").
pub fn bar(total: u64, unit: &str) -> ProgressBar {
    ProgressBar::new(total).with_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30.cyan/blue}} {{pos}}/{{len}} {unit}, ETA {{eta}}  {{msg}}"
        ))
        .expect("the template is valid")
        .progress_chars("=> "),
    )
}
