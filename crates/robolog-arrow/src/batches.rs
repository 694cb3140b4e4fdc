//! One topic of a log as a sequence of record batches ([`TopicBatches`]), decoded as they are
//! asked for.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use robolog::{Filter, Log};

use crate::error::{Error, Result};
use crate::export::{DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS};
use crate::layout::{BatchBuilder, TopicLayout};

/// Which rows and columns of a topic [`TopicBatches`] reads.
///
/// ```
/// let options = robolog_arrow::TopicOptions::new()
///     .columns(["log_time", "header"])
///     .time_range(1_600_000_000_000_000_000..)
///     .raw_undecodable(true);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TopicOptions {
    columns: Option<Vec<String>>,
    filter: Filter,
    raw_undecodable: bool,
    batch_rows: usize,
    batch_bytes: usize,
}

impl Default for TopicOptions {
    fn default() -> Self {
        TopicOptions {
            columns: None,
            filter: Filter::new(),
            raw_undecodable: false,
            batch_rows: DEFAULT_BATCH_ROWS,
            batch_bytes: DEFAULT_BATCH_BYTES,
        }
    }
}

impl TopicOptions {
    /// Every column and every message; an error for a topic that cannot be decoded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only these columns (names of [`TopicLayout::schema`]'s top-level fields), in this
    /// order. Fields that are not asked for are not decoded where the encoding allows it (see
    /// [`TopicLayout::batch_builder`]).
    pub fn columns<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.columns = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Only messages whose log time (ns) is in `range`.
    pub fn time_range(mut self, range: impl std::ops::RangeBounds<u64>) -> Self {
        self.filter = self.filter.time_range(range);
        self
    }

    /// A topic whose messages cannot be decoded becomes raw bytes ([`TopicLayout::raw`])
    /// instead of an error, as in [`crate::ExportOptions::raw_undecodable`].
    pub fn raw_undecodable(mut self, raw: bool) -> Self {
        self.raw_undecodable = raw;
        self
    }

    /// Batches of at most `rows` rows (at least one; default 64 Ki). A batch also closes
    /// early when its messages add up to 32 MiB, so that a topic of large messages is read in
    /// batches of bounded size whatever `rows` is.
    pub fn batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows.max(1);
        self
    }
}

/// The messages of one topic of a log as record batches with the layout of an export
/// ([`TopicLayout`]; the schema carries the export's key-value metadata), in log-time order.
/// Each batch is decoded when it is asked for, so memory is bounded by one batch (at most 64 Ki
/// rows or 32 MiB of message data), whatever the length of the topic.
///
/// ```
/// use robolog_arrow::{TopicBatches, TopicOptions};
/// let log = robolog::open(robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag"))?;
/// let options = TopicOptions::new().columns(["log_time", "linear_acceleration"]);
/// let batches = TopicBatches::new(&log, "/imu", options)?.collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 50);
/// assert_eq!(batches[0].schema().field(1).name(), "linear_acceleration");
/// assert_eq!(batches[0].schema().metadata()["robolog:topic"], "/imu");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TopicBatches {
    layout: TopicLayout,
    schema: SchemaRef,
    builder: BatchBuilder,
    /// None once the messages are read (or an error ended them).
    messages: Option<robolog::Messages>,
    topic: String,
    batch_rows: usize,
    batch_bytes: usize,
}

impl std::fmt::Debug for TopicBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicBatches")
            .field("topic", &self.topic)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl TopicBatches {
    /// The batches of `topic` (its exact name) in `log`. Fails when the log has no channel of
    /// the topic ([`Error::UnknownTopic`]), when a column asked for is not one of the topic's
    /// ([`Error::UnknownColumn`]), when the topic cannot be decoded (unless
    /// [`TopicOptions::raw_undecodable`]) or when its channels carry different types.
    pub fn new(log: &Log, topic: &str, options: TopicOptions) -> Result<Self> {
        let mut channels = log.channels().iter().filter(|c| c.topic == topic);
        let Some(first) = channels.next() else {
            let mut topics: Vec<String> = log.channels().iter().map(|c| c.topic.clone()).collect();
            topics.sort();
            topics.dedup();
            return Err(Error::UnknownTopic {
                topic: topic.to_owned(),
                topics,
            });
        };
        let layout = TopicLayout::for_channel(first, options.raw_undecodable)?;
        for channel in channels {
            layout.check_channel(channel)?;
        }
        let projection = match &options.columns {
            None => None,
            Some(names) => Some(projection(&layout, names)?),
        };
        let builder = layout.batch_builder(projection.as_deref())?;
        let schema = Arc::new(
            builder
                .schema()
                .as_ref()
                .clone()
                .with_metadata(layout.metadata().clone()),
        );
        let messages = log
            .messages()
            .filter(options.filter.topics([topic]))
            .iter()?;
        Ok(TopicBatches {
            layout,
            schema,
            builder,
            messages: Some(messages),
            topic: topic.to_owned(),
            batch_rows: options.batch_rows,
            batch_bytes: options.batch_bytes,
        })
    }

    /// The layout of the topic (all its columns, whichever are read).
    pub fn layout(&self) -> &TopicLayout {
        &self.layout
    }

    /// The schema of the batches: the columns asked for, with the topic's metadata
    /// ([`TopicLayout::metadata`]).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The next batch, `None` after the last. An error (a read error, a message that does not
    /// match its definition) ends the batches.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let Some(messages) = self.messages.as_mut() else {
            return Ok(None);
        };
        loop {
            let message = match messages.next() {
                Some(Ok(message)) => message,
                Some(Err(error)) => {
                    self.messages = None;
                    return Err(error.into());
                }
                None => {
                    self.messages = None;
                    break;
                }
            };
            // A topic name that is also a glob (`/a*`) selects other topics too.
            if message.channel.topic != self.topic {
                continue;
            }
            if let Err(error) = self.builder.push(&message) {
                self.messages = None;
                return Err(error);
            }
            if self.builder.len() >= self.batch_rows
                || self.builder.data_bytes() >= self.batch_bytes
            {
                return self.finish().map(Some);
            }
        }
        if self.builder.is_empty() {
            Ok(None)
        } else {
            self.finish().map(Some)
        }
    }

    fn finish(&mut self) -> Result<RecordBatch> {
        Ok(self.builder.finish()?.with_schema(self.schema.clone())?)
    }
}

impl Iterator for TopicBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().transpose()
    }
}

/// The indexes of the columns `names` in the layout's schema, each once, in the order given.
fn projection(layout: &TopicLayout, names: &[String]) -> Result<Vec<usize>> {
    let fields = layout.schema().fields();
    let mut indexes = Vec::with_capacity(names.len());
    for name in names {
        let Some(index) = fields.iter().position(|f| f.name() == name) else {
            return Err(Error::UnknownColumn {
                topic: layout.topic().to_owned(),
                column: name.clone(),
                columns: fields.iter().map(|f| f.name().clone()).collect(),
            });
        };
        if !indexes.contains(&index) {
            indexes.push(index);
        }
    }
    Ok(indexes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn batches_close_at_the_row_limit_and_keep_log_time_order() {
        let path = robolog_testkit::testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
        let log = robolog::open(path).unwrap();
        let options = TopicOptions::new().columns(["log_time"]).batch_rows(500);
        let batches: Vec<RecordBatch> = TopicBatches::new(&log, "/tf", options)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let rows: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(rows, [500, 500, 500, 500, 500, 188]);
        let mut last = 0;
        for batch in &batches {
            let times = batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow::array::TimestampNanosecondArray>()
                .unwrap();
            for t in times.values() {
                assert!(*t >= last);
                last = *t;
            }
        }
    }
}
