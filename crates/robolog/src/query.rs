//! What to read: topics (exact names and globs), a log-time range, and an order.

use std::collections::HashSet;
use std::ops::RangeBounds;
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use robolog_framing::InclusiveRange;

use crate::error::{Error, Result};
use crate::model::Channel;

/// The order messages come out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// By log time; equal times in file order.
    #[default]
    LogTime,
    /// As stored in the file (cheapest: no merging of overlapping chunks).
    File,
}

/// Which messages to read: topics and a log-time range. Everything by default.
///
/// Topic patterns are exact names, or globs when they contain `*`, `?`, `[` or `{`: `*` and `?`
/// stay within one `/`-separated level, `**` crosses levels (`/camera/**` matches
/// `/camera/left/image`), `{a,b}` picks alternatives. A topic equal to a pattern always
/// matches, even when the pattern looks like a glob.
///
/// ```
/// use robolog::Filter;
/// let filter = Filter::new().topics(["/imu", "/camera/*/image"]).time_range(10..20);
/// assert!(filter.contains_time(10) && !filter.contains_time(20));
/// let topics = filter.topic_matcher()?.unwrap();
/// assert!(topics.matches("/camera/left/image") && !topics.matches("/camera/left/info"));
/// # Ok::<(), robolog::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    topics: Option<Vec<String>>,
    start: u64,
    end: u64,
    empty: bool,
}

impl Default for Filter {
    fn default() -> Self {
        Self {
            topics: None,
            start: 0,
            end: u64::MAX,
            empty: false,
        }
    }
}

impl Filter {
    /// Every message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only messages on topics matching one of `patterns` (replaces earlier patterns).
    pub fn topics<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.topics = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Only messages whose log time (ns) is in `range`.
    pub fn time_range(mut self, range: impl RangeBounds<u64>) -> Self {
        let range = InclusiveRange::new(range);
        self.start = range.first;
        self.end = range.last;
        self.empty = range.empty;
        self
    }

    /// The topic patterns, `None` for every topic.
    pub fn topic_patterns(&self) -> Option<&[String]> {
        self.topics.as_deref()
    }

    /// The compiled topic patterns, `None` for every topic.
    pub fn topic_matcher(&self) -> Result<Option<TopicMatcher>> {
        self.topics.as_ref().map(TopicMatcher::new).transpose()
    }

    /// First log time included.
    pub fn start_ns(&self) -> u64 {
        self.start
    }

    /// Last log time included (`u64::MAX` when unbounded).
    pub fn end_ns_inclusive(&self) -> u64 {
        self.end
    }

    /// True when no time can match (an empty range).
    pub fn is_empty_range(&self) -> bool {
        self.empty
    }

    /// True when `time_ns` is in the range.
    pub fn contains_time(&self, time_ns: u64) -> bool {
        !self.empty && self.start <= time_ns && time_ns <= self.end
    }

    /// True when the range is unbounded on both sides.
    pub fn all_times(&self) -> bool {
        !self.empty && self.start == 0 && self.end == u64::MAX
    }

    /// True when the filter selects everything.
    pub fn is_everything(&self) -> bool {
        self.topics.is_none() && self.all_times()
    }

    /// The channels the topic patterns select.
    pub fn select<'c>(
        &self,
        channels: impl IntoIterator<Item = &'c Arc<Channel>>,
    ) -> Result<Selection> {
        let Some(matcher) = self.topic_matcher()? else {
            return Ok(Selection {
                channels: None,
                unmatched: Vec::new(),
            });
        };
        let mut ids = Vec::new();
        let mut used = vec![false; matcher.patterns.len()];
        for channel in channels {
            let mut hit = false;
            for (i, pattern) in matcher.patterns.iter().enumerate() {
                if matcher.pattern_matches(i, pattern, &channel.topic) {
                    used[i] = true;
                    hit = true;
                }
            }
            if hit {
                ids.push(channel.id);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        let unmatched = matcher
            .patterns
            .iter()
            .zip(used)
            .filter(|(_, used)| !used)
            .map(|(p, _)| p.clone())
            .collect();
        Ok(Selection {
            channels: Some(ids),
            unmatched,
        })
    }
}

/// Channels picked by a [`Filter`]'s topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Sorted channel ids, `None` for every channel.
    pub channels: Option<Vec<u32>>,
    /// Patterns that matched no channel (worth a warning: a typo?).
    pub unmatched: Vec<String>,
}

impl Selection {
    /// True when channel `id` is selected.
    pub fn contains(&self, id: u32) -> bool {
        self.channels
            .as_ref()
            .is_none_or(|ids| ids.binary_search(&id).is_ok())
    }
}

/// Compiled topic patterns.
#[derive(Debug, Clone)]
pub struct TopicMatcher {
    patterns: Vec<String>,
    exact: HashSet<String>,
    /// Index into `patterns` of each glob in `globs`.
    glob_patterns: Vec<usize>,
    globs: GlobSet,
}

impl TopicMatcher {
    /// Compiles `patterns` (see [`Filter`] for the syntax).
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Result<Self> {
        let patterns: Vec<String> = patterns
            .into_iter()
            .map(|p| p.as_ref().to_owned())
            .collect();
        let mut builder = GlobSetBuilder::new();
        let mut glob_patterns = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            if is_glob(pattern) {
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|source| Error::TopicPattern {
                        pattern: pattern.clone(),
                        source,
                    })?;
                builder.add(glob);
                glob_patterns.push(i);
            }
        }
        let globs = builder.build().map_err(|source| Error::TopicPattern {
            pattern: patterns.join(" "),
            source,
        })?;
        Ok(Self {
            exact: patterns.iter().cloned().collect(),
            patterns,
            glob_patterns,
            globs,
        })
    }

    /// True when `topic` matches any pattern.
    pub fn matches(&self, topic: &str) -> bool {
        self.exact.contains(topic) || (!self.glob_patterns.is_empty() && self.globs.is_match(topic))
    }

    fn pattern_matches(&self, index: usize, pattern: &str, topic: &str) -> bool {
        if pattern == topic {
            return true;
        }
        match self.glob_patterns.iter().position(|&p| p == index) {
            Some(glob) => self.globs.matches(topic).contains(&glob),
            None => false,
        }
    }
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn channel(id: u32, topic: &str) -> Arc<Channel> {
        Arc::new(Channel {
            id,
            topic: topic.into(),
            message_encoding: "ros1".into(),
            schema: None,
            metadata: BTreeMap::new(),
        })
    }

    #[test]
    fn exact_names_globs_and_unmatched_patterns() {
        let channels = [
            channel(0, "/imu"),
            channel(1, "/camera/left/image"),
            channel(2, "/camera/right/image"),
            channel(3, "/camera/left/info"),
            channel(4, "/tf"),
        ];
        let filter = Filter::new().topics(["/tf", "/camera/*/image", "/gps", "/camera/**"]);
        let selection = filter.select(&channels).unwrap();
        assert_eq!(selection.channels, Some(vec![1, 2, 3, 4]));
        assert_eq!(selection.unmatched, ["/gps"]);
        let only_star = Filter::new().topics(["/*"]).select(&channels).unwrap();
        assert_eq!(only_star.channels, Some(vec![0, 4]));
        assert!(Filter::new().select(&channels).unwrap().channels.is_none());
    }

    #[test]
    fn bad_globs_are_errors() {
        let err = Filter::new()
            .topics(["/a[", "/b"])
            .topic_matcher()
            .unwrap_err();
        assert!(
            err.to_string().starts_with("invalid topic pattern \"/a[\""),
            "{err}"
        );
    }

    #[test]
    fn time_ranges() {
        assert!(Filter::new().time_range(5..5).is_empty_range());
        assert!(Filter::new().time_range(..0).is_empty_range());
        let f = Filter::new().time_range(5..=7);
        assert_eq!((f.start_ns(), f.end_ns_inclusive()), (5, 7));
        assert!(!f.contains_time(8) && f.contains_time(7));
        assert!(Filter::new().is_everything());
        assert!(!Filter::new().time_range(1..).is_everything());
    }
}
