//! SQL over logs: DataFusion tables for topics, messages and channels.
//!
//! [`LogTables`] opens logs (files, or every log in a directory) and registers in a
//! DataFusion [`SessionContext`]:
//!
//! - one table per topic, named by the topic (quote it: `SELECT * FROM "/imu"`), with the
//!   columns of [`TopicLayout`]; topics whose messages cannot be decoded are tables of raw
//!   bytes (`log_time`, `publish_time`, `data`);
//! - `messages`: `topic`, `log_time`, `publish_time`, `sequence`, `size` of every message,
//!   without decoding;
//! - `channels`: `file`, `id`, `topic`, `message_encoding`, `schema_name`, `schema_encoding`,
//!   `message_count`.
//!
//! Filters on `log_time` (comparisons with constants) and on `topic` (in `messages`) go to the
//! logs' indexes: chunks outside the time range are never read or decompressed. The columns a
//! query uses are the only ones decoded, and a query that uses none (`count(*)`) decodes
//! nothing. Each input file is a partition of its own, so many files are read in parallel.
//!
//! # In your own DataFusion session
//!
//! The tables are ordinary [`TableProvider`]s: register a log, or a directory of logs, in a
//! [`SessionContext`] of your own with [`LogTables::register`] (every table) or one table under
//! the name you like ([`LogTables::topic_table`], [`LogTables::messages_table`]), next to your
//! other tables.
//!
//! ```
//! use robolog_arrow::LogTables;
//! use robolog_arrow::datafusion::prelude::SessionContext;
//!
//! // A directory of logs: every log in it is read, topics of the same name are one table.
//! let dir = tempfile::tempdir()?;
//! for name in ["ref_lz4.bag", "ref_bz2.bag"] {
//!     let from = robolog_testkit::testdata::path(&format!("bags/generated/ros_comm/{name}"));
//!     std::fs::copy(from, dir.path().join(name))?;
//! }
//! let tables = LogTables::open([dir.path()])?;
//!
//! let context = SessionContext::new();
//! tables.register(&context)?;
//! context.register_table("imu", tables.topic_table("/imu").unwrap())?;
//!
//! let runtime = tokio::runtime::Runtime::new()?;
//! let batches = runtime.block_on(async {
//!     context
//!         .sql(r#"SELECT count(*) AS n, max(header.seq) AS last FROM imu WHERE log_time >= '2020-09-13T12:26:40.2Z'"#)
//!         .await?
//!         .collect()
//!         .await
//! })?;
//! let text = robolog_arrow::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 60 | 49   |"), "{text}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, RecordBatch, StringArray, TimestampNanosecondArray, UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{ScalarValue, TableReference};
use datafusion::datasource::MemTable;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    BinaryExpr, Expr, Operator, TableProviderFilterPushDown, TableType,
};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use datafusion::prelude::SessionContext;
use robolog::{Filter, Log};

use crate::error::{Error, Result};
use crate::layout::{TopicLayout, time_type};

/// Rows per batch a scan produces (DataFusion's own default batch size).
const SCAN_BATCH_ROWS: usize = 8192;
/// Message bytes per batch a scan produces at most (images: a few per batch).
const SCAN_BATCH_BYTES: usize = 16 << 20;
/// Batches a partition may decode ahead of the query.
const SCAN_QUEUE: usize = 2;

/// One opened input.
#[derive(Debug)]
struct Input {
    path: PathBuf,
    log: Log,
}

/// Logs opened for SQL: the tables of their topics, `messages` and `channels`.
///
/// ```
/// use robolog_arrow::LogTables;
/// let path = robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag");
/// let tables = LogTables::open([path])?;
/// let batches = tables.sql_blocking(r#"SELECT count(*) AS n, avg(linear_acceleration.z) AS z FROM "/imu""#)?;
/// let text = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
/// assert!(text.contains("| 50 | 9.81 |"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LogTables {
    inputs: Arc<Vec<Input>>,
    topics: BTreeMap<String, Arc<TopicTable>>,
}

impl LogTables {
    /// Opens the logs at `paths`: files, ROS 2 bag directories (with a `metadata.yaml`), or
    /// directories of logs, whose files of a known format and bag sub-directories are read
    /// (nothing deeper).
    pub fn open<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Result<Self> {
        let mut files = Vec::new();
        for path in paths {
            let path = path.as_ref();
            if path.is_dir() && !is_bag_dir(path) {
                let mut entries = std::fs::read_dir(path)
                    .map_err(|e| Error::io(path, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| if p.is_dir() { is_bag_dir(p) } else { is_log(p) })
                    .collect::<Vec<_>>();
                entries.sort();
                files.extend(entries);
            } else {
                files.push(path.to_path_buf());
            }
        }
        let mut inputs = Vec::with_capacity(files.len());
        for path in files {
            let log = robolog::open(&path).map_err(|e| match e {
                robolog::Error::Io(source) => Error::io(&path, source),
                other => Error::Log(other),
            })?;
            inputs.push(Input { path, log });
        }
        Self::from_inputs(inputs)
    }

    /// Tables over logs opened already (their paths are only used as names in `channels`).
    pub fn from_logs(logs: impl IntoIterator<Item = (PathBuf, Log)>) -> Result<Self> {
        Self::from_inputs(
            logs.into_iter()
                .map(|(path, log)| Input { path, log })
                .collect(),
        )
    }

    fn from_inputs(inputs: Vec<Input>) -> Result<Self> {
        let inputs = Arc::new(inputs);
        let mut layouts: BTreeMap<String, (TopicLayout, Vec<usize>)> = BTreeMap::new();
        for (index, input) in inputs.iter().enumerate() {
            for channel in input.log.channels() {
                match layouts.get_mut(&channel.topic) {
                    Some((layout, files)) => {
                        layout.check_channel(channel)?;
                        if files.last() != Some(&index) {
                            files.push(index);
                        }
                    }
                    None => {
                        let layout = TopicLayout::for_channel(channel, true)?;
                        layouts.insert(channel.topic.clone(), (layout, vec![index]));
                    }
                }
            }
        }
        let topics = layouts
            .into_iter()
            .map(|(topic, (layout, files))| {
                let table = TopicTable {
                    layout,
                    inputs: inputs.clone(),
                    files,
                };
                (topic, Arc::new(table))
            })
            .collect();
        Ok(LogTables { inputs, topics })
    }

    /// The topics, sorted.
    pub fn topics(&self) -> impl Iterator<Item = &str> {
        self.topics.keys().map(String::as_str)
    }

    /// The table of one topic.
    pub fn topic_table(&self, topic: &str) -> Option<Arc<TopicTable>> {
        self.topics.get(topic).cloned()
    }

    /// The `messages` table.
    pub fn messages_table(&self) -> Arc<MessagesTable> {
        Arc::new(MessagesTable {
            inputs: self.inputs.clone(),
            schema: messages_schema(),
        })
    }

    /// The `channels` table (small: built in memory).
    pub fn channels_table(&self) -> Result<Arc<MemTable>> {
        let mut file = Vec::new();
        let mut id = Vec::new();
        let mut topic = Vec::new();
        let mut encoding = Vec::new();
        let mut schema_name = Vec::new();
        let mut schema_encoding = Vec::new();
        let mut count = Vec::new();
        for input in self.inputs.iter() {
            let summary = input.log.summary()?;
            for entry in &summary.channels {
                let channel = &entry.channel;
                file.push(input.path.display().to_string());
                id.push(channel.id);
                topic.push(channel.topic.clone());
                encoding.push(channel.message_encoding.clone());
                schema_name.push(channel.schema.as_ref().map(|s| s.name.clone()));
                schema_encoding.push(channel.schema.as_ref().map(|s| s.encoding.clone()));
                count.push(entry.message_count);
            }
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("file", DataType::Utf8, false),
            Field::new("id", DataType::UInt32, false),
            Field::new("topic", DataType::Utf8, false),
            Field::new("message_encoding", DataType::Utf8, false),
            Field::new("schema_name", DataType::Utf8, true),
            Field::new("schema_encoding", DataType::Utf8, true),
            Field::new("message_count", DataType::UInt64, false),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(file)),
            Arc::new(UInt32Array::from(id)),
            Arc::new(StringArray::from(topic)),
            Arc::new(StringArray::from(encoding)),
            Arc::new(StringArray::from(schema_name)),
            Arc::new(StringArray::from(schema_encoding)),
            Arc::new(UInt64Array::from(count)),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        Ok(Arc::new(
            MemTable::try_new(schema, vec![vec![batch]]).map_err(df_error)?,
        ))
    }

    /// Registers every topic table, `messages` and `channels` in `context`. A topic called
    /// `messages` or `channels` hides the built-in table of that name.
    pub fn register(&self, context: &SessionContext) -> Result<()> {
        context
            .register_table(TableReference::bare("messages"), self.messages_table())
            .map_err(df_error)?;
        context
            .register_table(TableReference::bare("channels"), self.channels_table()?)
            .map_err(df_error)?;
        for (topic, table) in &self.topics {
            context
                .register_table(TableReference::bare(topic.as_str()), table.clone())
                .map_err(df_error)?;
        }
        Ok(())
    }

    /// A session with these tables registered.
    pub fn context(&self) -> Result<SessionContext> {
        let context = SessionContext::new();
        self.register(&context)?;
        Ok(context)
    }

    /// Runs one SQL statement on a new session with these tables, on a runtime of its own,
    /// and returns the result.
    pub fn sql_blocking(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        let context = self.context()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(Path::new("tokio runtime"), e))?;
        runtime.block_on(async {
            let frame = context.sql(sql).await.map_err(df_error)?;
            frame.collect().await.map_err(df_error)
        })
    }
}

/// True when `path` is a ROS 2 bag directory (it has a `metadata.yaml`).
fn is_bag_dir(path: &Path) -> bool {
    path.join("metadata.yaml").is_file()
}

/// True when `path` starts like a log robolog reads.
fn is_log(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; robolog::SNIFF_LEN];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    robolog::sniff(&head[..filled]).is_ok()
}

/// A DataFusion error as ours.
pub(crate) fn df_error(error: datafusion::error::DataFusionError) -> Error {
    Error::Sql(Box::new(error))
}

/// The table of one topic across the inputs that have it.
#[derive(Debug)]
pub struct TopicTable {
    layout: TopicLayout,
    inputs: Arc<Vec<Input>>,
    /// Indexes of the inputs with channels of this topic.
    files: Vec<usize>,
}

impl TopicTable {
    /// The layout of the topic's rows.
    pub fn layout(&self) -> &TopicLayout {
        &self.layout
    }
}

#[async_trait]
impl TableProvider for TopicTable {
    fn schema(&self) -> SchemaRef {
        self.layout.schema().clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
        let time = self.layout.schema().field(0).name().clone();
        Ok(filters
            .iter()
            .map(|f| {
                if time_bound(f, &time).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let time = self.layout.schema().field(0).name().clone();
        let mut filter = Filter::new().topics([self.layout.topic()]);
        let (mut start, mut end) = (0u64, u64::MAX);
        for f in filters {
            if let Some((lo, hi)) = time_bound(f, &time) {
                start = start.max(lo);
                end = end.min(hi);
            }
        }
        filter = if start > end {
            filter.time_range(0..0)
        } else {
            filter.time_range(start..=end)
        };
        let builder = self
            .layout
            .batch_builder(projection.map(Vec::as_slice))
            .map_err(to_df)?;
        let schema = builder.schema().clone();
        let partitions: Vec<Arc<dyn PartitionStream>> = self
            .files
            .iter()
            .map(|&input| {
                Arc::new(TopicPartition {
                    layout: self.layout.clone(),
                    projection: projection.cloned(),
                    schema: schema.clone(),
                    inputs: self.inputs.clone(),
                    input,
                    filter: filter.clone(),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            partitions,
            None,
            Vec::new(),
            false,
            limit,
        )?))
    }
}

fn to_df(error: Error) -> datafusion::error::DataFusionError {
    match error {
        Error::Sql(e) => *e,
        other => datafusion::error::DataFusionError::External(Box::new(other)),
    }
}

/// The inclusive log-time range (ns) a filter keeps, when it is a comparison of the time
/// column with a constant (either side).
fn time_bound(expr: &Expr, column: &str) -> Option<(u64, u64)> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return None;
    };
    let (op, value) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column(c), Expr::Literal(v, _)) if c.name == column => (*op, v),
        (Expr::Literal(v, _), Expr::Column(c)) if c.name == column => (op.swap()?, v),
        _ => return None,
    };
    let ns: i64 = match value {
        ScalarValue::TimestampNanosecond(Some(v), _) | ScalarValue::Int64(Some(v)) => *v,
        ScalarValue::TimestampMicrosecond(Some(v), _) => v.checked_mul(1_000)?,
        ScalarValue::TimestampMillisecond(Some(v), _) => v.checked_mul(1_000_000)?,
        ScalarValue::TimestampSecond(Some(v), _) => v.checked_mul(1_000_000_000)?,
        _ => return None,
    };
    // Coarser units round down: a bound one tick wider is still a superset (the filter is
    // applied again to the rows).
    let below = |v: i64| u64::try_from(v).ok();
    match op {
        Operator::Eq => {
            let t = below(ns)?;
            Some((t, t))
        }
        Operator::Gt => Some((below(ns.checked_add(1)?).unwrap_or(0), u64::MAX)),
        Operator::GtEq => Some((below(ns).unwrap_or(0), u64::MAX)),
        Operator::Lt => Some((
            0,
            if ns <= 0 {
                return Some((1, 0));
            } else {
                below(ns - 1)?
            },
        )),
        Operator::LtEq => Some((
            0,
            if ns < 0 {
                return Some((1, 0));
            } else {
                below(ns)?
            },
        )),
        _ => None,
    }
}

/// One input's share of a topic table.
#[derive(Debug)]
struct TopicPartition {
    layout: TopicLayout,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    inputs: Arc<Vec<Input>>,
    input: usize,
    filter: Filter,
}

impl PartitionStream for TopicPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut stream = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), SCAN_QUEUE);
        let tx = stream.tx();
        let layout = self.layout.clone();
        let projection = self.projection.clone();
        let inputs = self.inputs.clone();
        let input = self.input;
        let filter = self.filter.clone();
        stream.spawn_blocking(move || {
            let mut builder = layout.batch_builder(projection.as_deref()).map_err(to_df)?;
            let log = &inputs[input].log;
            let messages = log
                .messages()
                .filter(filter)
                .order(robolog::Order::File)
                .iter()
                .map_err(|e| to_df(e.into()))?;
            for message in messages {
                let message = message.map_err(|e| to_df(e.into()))?;
                builder.push(&message).map_err(to_df)?;
                if builder.len() >= SCAN_BATCH_ROWS || builder.data_bytes() >= SCAN_BATCH_BYTES {
                    let batch = builder.finish().map_err(to_df)?;
                    if tx.blocking_send(Ok(batch)).is_err() {
                        // The query needs no more rows (a LIMIT, or it failed elsewhere).
                        return Ok(());
                    }
                }
            }
            if !builder.is_empty() {
                let batch = builder.finish().map_err(to_df)?;
                let _ = tx.blocking_send(Ok(batch));
            }
            Ok(())
        });
        stream.build()
    }
}

fn messages_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("topic", DataType::Utf8, false),
        Field::new("log_time", time_type(), false),
        Field::new("publish_time", time_type(), true),
        Field::new("sequence", DataType::UInt32, true),
        Field::new("size", DataType::UInt64, false),
    ]))
}

/// The `messages` table: one row per message of every input, without decoding.
#[derive(Debug)]
pub struct MessagesTable {
    inputs: Arc<Vec<Input>>,
    schema: SchemaRef,
}

#[async_trait]
impl TableProvider for MessagesTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if time_bound(f, "log_time").is_some() || topic_values(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let (mut start, mut end) = (0u64, u64::MAX);
        let mut topics: Option<Vec<String>> = None;
        for f in filters {
            if let Some((lo, hi)) = time_bound(f, "log_time") {
                start = start.max(lo);
                end = end.min(hi);
            } else if let Some(values) = topic_values(f) {
                topics = Some(match topics {
                    None => values,
                    Some(before) => before.into_iter().filter(|t| values.contains(t)).collect(),
                });
            }
        }
        let mut filter = Filter::new();
        if let Some(topics) = topics {
            filter = filter.topics(topics);
        }
        filter = if start > end {
            filter.time_range(0..0)
        } else {
            filter.time_range(start..=end)
        };
        let projection: Vec<usize> = projection
            .cloned()
            .unwrap_or_else(|| (0..self.schema.fields().len()).collect());
        let schema = Arc::new(self.schema.project(&projection)?);
        let partitions: Vec<Arc<dyn PartitionStream>> = (0..self.inputs.len())
            .map(|input| {
                Arc::new(MessagesPartition {
                    schema: schema.clone(),
                    projection: projection.clone(),
                    inputs: self.inputs.clone(),
                    input,
                    filter: filter.clone(),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            partitions,
            None,
            Vec::new(),
            false,
            limit,
        )?))
    }
}

/// The topics a filter on `topic` keeps: `topic = 'x'`, `topic IN ('x', 'y')` or equalities
/// joined by OR.
fn topic_values(expr: &Expr) -> Option<Vec<String>> {
    let text = |e: &Expr| match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        ) => Some(s.clone()),
        _ => None,
    };
    let is_topic = |e: &Expr| matches!(e, Expr::Column(c) if c.name == "topic");
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => {
            if is_topic(left) {
                text(right).map(|t| vec![t])
            } else if is_topic(right) {
                text(left).map(|t| vec![t])
            } else {
                None
            }
        }
        Expr::InList(list) if !list.negated && is_topic(&list.expr) => {
            list.list.iter().map(text).collect()
        }
        // DataFusion's simplifier may turn a short IN list into equalities joined by OR.
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => {
            let mut values = topic_values(left)?;
            values.extend(topic_values(right)?);
            Some(values)
        }
        _ => None,
    }
}

#[derive(Debug)]
struct MessagesPartition {
    schema: SchemaRef,
    projection: Vec<usize>,
    inputs: Arc<Vec<Input>>,
    input: usize,
    filter: Filter,
}

impl PartitionStream for MessagesPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut stream = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), SCAN_QUEUE);
        let tx = stream.tx();
        let schema = self.schema.clone();
        let projection = self.projection.clone();
        let inputs = self.inputs.clone();
        let input = self.input;
        let filter = self.filter.clone();
        stream.spawn_blocking(move || {
            let log = &inputs[input].log;
            let messages = log
                .messages()
                .filter(filter)
                .order(robolog::Order::File)
                .iter()
                .map_err(|e| to_df(e.into()))?;
            let mut rows = MessageRows::default();
            let send = |rows: &mut MessageRows| {
                let batch = rows.finish(&schema, &projection)?;
                Ok::<bool, datafusion::error::DataFusionError>(tx.blocking_send(Ok(batch)).is_ok())
            };
            for message in messages {
                let message = message.map_err(|e| to_df(e.into()))?;
                rows.push(&message);
                if rows.len() >= SCAN_BATCH_ROWS && !send(&mut rows)? {
                    return Ok(());
                }
            }
            if rows.len() > 0 {
                send(&mut rows)?;
            }
            Ok(())
        });
        stream.build()
    }
}

#[derive(Default)]
struct MessageRows {
    topic: Vec<String>,
    log_time: Vec<i64>,
    publish_time: Vec<Option<i64>>,
    sequence: Vec<Option<u32>>,
    size: Vec<u64>,
}

impl fmt::Debug for MessageRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageRows")
            .field("rows", &self.len())
            .finish()
    }
}

impl MessageRows {
    fn len(&self) -> usize {
        self.log_time.len()
    }

    fn push(&mut self, message: &robolog::Message) {
        self.topic.push(message.channel.topic.clone());
        self.log_time
            .push(i64::try_from(message.log_time_ns).unwrap_or(i64::MAX));
        self.publish_time
            .push(message.publish_time_ns.and_then(|t| i64::try_from(t).ok()));
        self.sequence.push(message.sequence);
        self.size.push(message.data.len() as u64);
    }

    fn finish(
        &mut self,
        schema: &SchemaRef,
        projection: &[usize],
    ) -> datafusion::error::Result<RecordBatch> {
        let rows = std::mem::take(self);
        let len = rows.len();
        let all: [ArrayRef; 5] = [
            Arc::new(StringArray::from(rows.topic)),
            Arc::new(TimestampNanosecondArray::from(rows.log_time).with_timezone("UTC")),
            Arc::new(TimestampNanosecondArray::from(rows.publish_time).with_timezone("UTC")),
            Arc::new(UInt32Array::from(rows.sequence)),
            Arc::new(UInt64Array::from(rows.size)),
        ];
        let columns = projection.iter().map(|&i| all[i].clone()).collect();
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(len));
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &options,
        )?)
    }
}
