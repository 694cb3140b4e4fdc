//! `--topic` (and its regex and exclude forms), `--start` and `--end` as a facade filter.

use clap::error::ErrorKind;
use robolog::Filter;

use crate::cli::Selection;
use crate::failure::Failure;
use crate::time::format_utc;

impl Selection {
    /// The filter: the topics given (all without any), log times in `[start, end)`.
    pub fn filter(&self) -> Result<Filter, Failure> {
        let mut filter = Filter::new();
        if !self.topics.is_empty() {
            filter = filter.topics(self.topics.iter().cloned());
        }
        filter = filter
            .topic_regexes(self.topic_regex.iter().cloned())
            .exclude_topics(self.exclude_topic.iter().cloned())
            .exclude_topic_regexes(self.exclude_topic_regex.iter().cloned());
        // Report a bad pattern as a usage error now rather than as a read error later.
        filter
            .topic_matcher()
            .map_err(|e| Failure::usage(ErrorKind::ValueValidation, e))?;
        let start = self.start_ns()?;
        let end = self.end_ns()?;
        if let (Some(start), Some(end)) = (start, end)
            && start >= end
        {
            return Err(Failure::usage(
                ErrorKind::ArgumentConflict,
                format!(
                    "--start ({}) must be before --end ({})",
                    format_utc(start),
                    format_utc(end)
                ),
            ));
        }
        filter = match (start, end) {
            (None, None) => filter,
            (start, Some(end)) => filter.time_range(start.unwrap_or(0)..end),
            (Some(start), None) => filter.time_range(start..),
        };
        Ok(filter)
    }

    fn start_ns(&self) -> Result<Option<u64>, Failure> {
        time_of(
            self.start,
            self.start_secs,
            self.start_nsecs,
            "--start-secs",
        )
    }

    fn end_ns(&self) -> Result<Option<u64>, Failure> {
        time_of(self.end, self.end_secs, self.end_nsecs, "--end-secs")
    }
}

/// One of a time's spellings (clap refuses two at once).
fn time_of(
    any: Option<u64>,
    secs: Option<u64>,
    nsecs: Option<u64>,
    secs_name: &str,
) -> Result<Option<u64>, Failure> {
    if let Some(secs) = secs {
        return secs.checked_mul(1_000_000_000).map(Some).ok_or_else(|| {
            Failure::usage(
                ErrorKind::ValueValidation,
                format!("{secs_name} {secs} is too large: log times end in 2554"),
            )
        });
    }
    Ok(any.or(nsecs))
}
