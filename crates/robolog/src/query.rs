//! What to read: topics (names, globs and regular expressions, to include or exclude), a
//! log-time range, and an order.

use std::collections::HashSet;
use std::ops::RangeBounds;
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::RegexSet;
use robolog_framing::InclusiveRange;

use crate::error::{Error, Result};
use crate::model::Channel;

pub use robolog_query::Order;

/// Which messages to read: topics and a log-time range. Everything by default.
///
/// Topics are chosen by patterns to include and patterns to exclude; a topic is read when it
/// matches an include pattern (or none is given) and no exclude pattern. Patterns are exact
/// names, globs, or regular expressions:
///
/// - a name or glob ([`Filter::topics`], [`Filter::exclude_topics`]) is a glob when it contains
///   `*`, `?`, `[` or `{`: `*` matches any characters, `/` included (`/turtle*` matches
///   `/turtle1/pose`), `?` one character, `[ab]` one of a set, `{a,b}` one of the alternatives.
///   A topic equal to a pattern always matches, even when the pattern looks like a glob;
/// - a regular expression ([`Filter::topic_regexes`], [`Filter::exclude_topic_regexes`], the
///   syntax of the `regex` crate) must match the whole topic name: `/camera/.*` matches
///   `/camera/left/image`, `camera` matches only `camera` (as in the `mcap` CLI).
///
/// ```
/// use robolog::Filter;
/// let filter = Filter::new()
///     .topics(["/imu", "/camera/*/image"])
///     .topic_regexes(["/gps/(fix|vel)"])
///     .exclude_topics(["/camera/right/*"])
///     .time_range(10..20);
/// assert!(filter.contains_time(10) && !filter.contains_time(20));
/// let topics = filter.topic_matcher()?.unwrap();
/// assert!(topics.matches("/camera/left/image") && !topics.matches("/camera/left/info"));
/// assert!(topics.matches("/gps/fix") && !topics.matches("/gps/fix2"));
/// assert!(!topics.matches("/camera/right/image"));
/// # Ok::<(), robolog::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    topics: Option<Vec<String>>,
    topic_regexes: Vec<String>,
    exclude_topics: Vec<String>,
    exclude_regexes: Vec<String>,
    start: u64,
    end: u64,
    empty: bool,
}

impl Default for Filter {
    fn default() -> Self {
        Self {
            topics: None,
            topic_regexes: Vec::new(),
            exclude_topics: Vec::new(),
            exclude_regexes: Vec::new(),
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

    /// Only messages on topics matching one of `patterns`, names or globs (replaces earlier
    /// names and globs; regular expressions from [`Filter::topic_regexes`] still add to them).
    pub fn topics<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.topics = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Also messages on topics that one of these regular expressions matches whole (replaces
    /// earlier ones). With regular expressions alone, only the topics they match are read.
    pub fn topic_regexes<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.topic_regexes = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// No messages on topics matching one of these names or globs (replaces earlier ones).
    pub fn exclude_topics<S: Into<String>>(
        mut self,
        patterns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.exclude_topics = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// No messages on topics that one of these regular expressions matches whole (replaces
    /// earlier ones).
    pub fn exclude_topic_regexes<S: Into<String>>(
        mut self,
        patterns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.exclude_regexes = patterns.into_iter().map(Into::into).collect();
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

    /// The names and globs of the topics to include, `None` when none was given.
    pub fn topic_patterns(&self) -> Option<&[String]> {
        self.topics.as_deref()
    }

    /// True when topics are chosen at all (an include or an exclude pattern).
    pub fn selects_topics(&self) -> bool {
        self.topics.is_some()
            || !self.topic_regexes.is_empty()
            || !self.exclude_topics.is_empty()
            || !self.exclude_regexes.is_empty()
    }

    /// The compiled topic patterns, `None` for every topic.
    pub fn topic_matcher(&self) -> Result<Option<TopicMatcher>> {
        if !self.selects_topics() {
            return Ok(None);
        }
        let include = if self.topics.is_none() && self.topic_regexes.is_empty() {
            None
        } else {
            Some(PatternSet::new(
                self.topics.iter().flatten(),
                &self.topic_regexes,
            )?)
        };
        let exclude = if self.exclude_topics.is_empty() && self.exclude_regexes.is_empty() {
            None
        } else {
            Some(PatternSet::new(
                &self.exclude_topics,
                &self.exclude_regexes,
            )?)
        };
        Ok(Some(TopicMatcher { include, exclude }))
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
        !self.selects_topics() && self.all_times()
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
        let include_count = matcher.include.as_ref().map_or(0, |s| s.patterns.len());
        let mut used = vec![false; include_count];
        for channel in channels {
            let topic = channel.topic.as_str();
            let included = match &matcher.include {
                None => true,
                Some(set) => {
                    let mut hit = false;
                    for i in set.matching(topic) {
                        used[i] = true;
                        hit = true;
                    }
                    hit
                }
            };
            if included && !matcher.exclude.as_ref().is_some_and(|s| s.matches(topic)) {
                ids.push(channel.id);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        let unmatched = matcher
            .include
            .iter()
            .flat_map(|set| set.patterns.iter())
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
    /// Include patterns that matched no channel (worth a warning: a typo?).
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

/// Compiled topic patterns: what to include and what to exclude (see [`Filter`]).
#[derive(Debug, Clone)]
pub struct TopicMatcher {
    include: Option<PatternSet>,
    exclude: Option<PatternSet>,
}

impl TopicMatcher {
    /// Compiles names and globs to include (see [`Filter`] for the syntax).
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Result<Self> {
        let patterns: Vec<String> = patterns
            .into_iter()
            .map(|p| p.as_ref().to_owned())
            .collect();
        Ok(Self {
            include: Some(PatternSet::new(&patterns, &[] as &[String])?),
            exclude: None,
        })
    }

    /// True when `topic` is selected: included and not excluded.
    pub fn matches(&self, topic: &str) -> bool {
        self.include.as_ref().is_none_or(|s| s.matches(topic))
            && !self.exclude.as_ref().is_some_and(|s| s.matches(topic))
    }
}

/// Names, globs and regular expressions, each remembered as given for messages.
#[derive(Debug, Clone)]
struct PatternSet {
    /// Names and globs first, then regular expressions.
    patterns: Vec<String>,
    exact: HashSet<String>,
    /// Index into `patterns` of each glob in `globs`.
    glob_patterns: Vec<usize>,
    globs: GlobSet,
    /// Index into `patterns` of the first regular expression.
    first_regex: usize,
    regexes: RegexSet,
}

impl PatternSet {
    fn new<'p>(names: impl IntoIterator<Item = &'p String>, regexes: &[String]) -> Result<Self> {
        let mut patterns: Vec<String> = names.into_iter().cloned().collect();
        let mut builder = GlobSetBuilder::new();
        let mut glob_patterns = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            if is_glob(pattern) {
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(false)
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
        let exact = patterns.iter().cloned().collect();
        let first_regex = patterns.len();
        let mut anchored = Vec::with_capacity(regexes.len());
        for pattern in regexes {
            // Checked one by one so that the error names the pattern at fault.
            let whole = format!("^(?:{pattern})$");
            regex::Regex::new(&whole).map_err(|source| Error::TopicRegex {
                pattern: pattern.clone(),
                source: Box::new(source),
            })?;
            anchored.push(whole);
            patterns.push(pattern.clone());
        }
        let regexes = RegexSet::new(&anchored).map_err(|source| Error::TopicRegex {
            pattern: regexes.join(" "),
            source: Box::new(source),
        })?;
        Ok(Self {
            patterns,
            exact,
            glob_patterns,
            globs,
            first_regex,
            regexes,
        })
    }

    fn matches(&self, topic: &str) -> bool {
        self.exact.contains(topic)
            || (!self.glob_patterns.is_empty() && self.globs.is_match(topic))
            || (!self.regexes.is_empty() && self.regexes.is_match(topic))
    }

    /// The index of every pattern that matches `topic`.
    fn matching(&self, topic: &str) -> Vec<usize> {
        let mut hits: Vec<usize> = (0..self.first_regex)
            .filter(|&i| self.patterns[i] == topic)
            .collect();
        if !self.glob_patterns.is_empty() {
            hits.extend(
                self.globs
                    .matches(topic)
                    .into_iter()
                    .map(|g| self.glob_patterns[g]),
            );
        }
        if !self.regexes.is_empty() {
            hits.extend(
                self.regexes
                    .matches(topic)
                    .into_iter()
                    .map(|r| self.first_regex + r),
            );
        }
        hits
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
        // `*` crosses `/`, as users expect of `/camera*` (and as `ros2 bag` regexes do).
        let star = Filter::new()
            .topics(["/camera*"])
            .select(&channels)
            .unwrap();
        assert_eq!(star.channels, Some(vec![1, 2, 3]));
        let only_star = Filter::new().topics(["/*"]).select(&channels).unwrap();
        assert_eq!(only_star.channels, Some(vec![0, 1, 2, 3, 4]));
        assert!(Filter::new().select(&channels).unwrap().channels.is_none());
    }

    #[test]
    fn regexes_match_whole_names_and_excludes_win() {
        let channels = [
            channel(0, "/imu"),
            channel(1, "/camera/left/image"),
            channel(2, "/camera/right/image"),
            channel(3, "/camera/left/info"),
            channel(4, "/tf"),
        ];
        let select = |filter: Filter| filter.select(&channels).unwrap();
        let regex = select(Filter::new().topic_regexes([".*/image", "/nothing.*", "tf"]));
        assert_eq!(regex.channels, Some(vec![1, 2]));
        // `tf` must match the whole name, so it does not match `/tf`.
        assert_eq!(regex.unmatched, ["/nothing.*", "tf"]);
        let both = select(Filter::new().topics(["/tf"]).topic_regexes(["/i.u"]));
        assert_eq!(both.channels, Some(vec![0, 4]));
        let excluded = select(Filter::new().exclude_topics(["/camera/left/*"]));
        assert_eq!(excluded.channels, Some(vec![0, 2, 4]));
        assert!(excluded.unmatched.is_empty());
        let mixed = select(
            Filter::new()
                .topics(["/camera/**"])
                .exclude_topic_regexes([".*/info"]),
        );
        assert_eq!(mixed.channels, Some(vec![1, 2]));
        let matcher = Filter::new()
            .exclude_topic_regexes(["/t."])
            .topic_matcher()
            .unwrap()
            .unwrap();
        assert!(matcher.matches("/imu") && !matcher.matches("/tf"));
        let err = Filter::new()
            .topic_regexes(["(a"])
            .topic_matcher()
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid topic regular expression \"(a\""),
            "{err}"
        );
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
