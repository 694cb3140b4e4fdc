//! The command line: every command, argument and option, as clap parses them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::size::parse_size;
use crate::time::parse_time;

/// Inspect, print, convert, check, recover and merge robot logs: ROS bag 2.0 and 1.2, MCAP and
/// BDDF, recognised from their first bytes, and ROS 2 bags, by their directory or `.db3` file.
#[derive(Debug, Parser)]
#[command(
    name = "robolog",
    // Also when `robolog-columnar` parses the command line (for `export` and `sql`): its usage
    // lines are `robolog`'s.
    bin_name = "robolog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit codes: 0 ok, 1 error (or problems found by `check`), \
                        2 usage, 3 data lost (`recover`)."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Inputs given as URLs (http://, https://, s3://) whose server ignores range requests are
    /// downloaded whole instead of refused.
    #[arg(long, global = true)]
    pub(crate) allow_download: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Summarise a log from its index: format, size, times, counts, chunks, channels,
    /// attachments, metadata.
    Info(InfoArgs),
    /// Print messages, one line each (or JSON Lines).
    Cat(CatArgs),
    /// Convert a log to another format (or the same one with other settings).
    Convert(ConvertArgs),
    /// Validate a log's structure: indexes against data, checksums, ordering, counts.
    Check(CheckArgs),
    /// Write a valid, indexed copy of a damaged, cut or unindexed log.
    ///
    /// An MCAP chunk that decompresses and matches its CRC is copied whole when the output
    /// compresses chunks the same way; a damaged one gives its intact messages.
    Recover(RecoverArgs),
    /// Merge logs into one, in log-time order.
    ///
    /// MCAP files whose chunks do not overlap in time are merged by copying their chunks whole.
    Merge(MergeArgs),
    /// Copy a log keeping some of it: topics (names, globs, regexes; included and excluded),
    /// a log-time window, attachments and metadata; in log-time, file or topic order.
    ///
    /// MCAP to MCAP, a chunk the output keeps whole (every message in it selected, the same
    /// compression, and file order, or log-time order with chunks that do not overlap in
    /// time) is copied as it is, without decompressing it: its CRC is the input's, not
    /// checked (`robolog check` checks it). The other chunks are decoded and written again.
    /// The same holds for sort, compress and decompress.
    Filter(FilterArgs),
    /// Rewrite a log in log-time order.
    Sort(RewriteArgs),
    /// Rewrite a log with compressed chunks (zstd for MCAP, lz4 for bags, unless
    /// --compression says).
    Compress(RewriteArgs),
    /// Rewrite a log with uncompressed chunks.
    Decompress(RewriteArgs),
    /// List a log's channels, schemas, chunks, attachments or metadata.
    #[command(subcommand)]
    List(ListCommand),
    /// Where a log's bytes go: by record kind (MCAP), by topic, by chunk compression.
    Du(ListArgs),
    /// Write out an attachment or print a metadata record.
    #[command(subcommand)]
    Get(GetCommand),
    /// Add an attachment or a metadata record to a log (rewritten under a temporary name and
    /// renamed into place).
    #[command(subcommand)]
    Add(AddCommand),
    /// Export topics to columnar files: one Parquet (or Arrow IPC) file per topic.
    #[cfg(feature = "columnar")]
    Export(ExportArgs),
    /// Run a SQL query over logs: one table per topic, plus `messages` and `channels`.
    #[cfg(feature = "columnar")]
    Sql(SqlArgs),
    /// ROS message definitions (.msg files, package trees, definition bundles).
    #[command(subcommand)]
    Msg(MsgCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell), to source or to
    /// install where the shell looks for completions.
    Completions(CompletionsArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum ListCommand {
    /// Channels: id, topic, schema, message encoding, message count, metadata.
    Channels(ListArgs),
    /// Schemas: id, name, encoding, size, and the topics that use each.
    Schemas(ListArgs),
    /// Chunks (MCAP, bag 2.0): offset, times, compression, sizes.
    Chunks(ListArgs),
    /// Attachments: name, media type, times, size, offset.
    Attachments(ListArgs),
    /// Metadata records: name and key-value pairs.
    Metadata(ListArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// The log; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum GetCommand {
    /// Write an attachment's content to standard output or to a file.
    Attachment(GetAttachmentArgs),
    /// Print a metadata record's pairs as a JSON object.
    Metadata(GetMetadataArgs),
}

#[derive(Debug, Args)]
pub(crate) struct GetAttachmentArgs {
    /// The log; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// The attachment's name.
    #[arg(long, short = 'n')]
    pub(crate) name: String,
    /// The attachment's record offset (as `list attachments` shows it), to pick one of several
    /// with the same name.
    #[arg(long, value_name = "BYTES")]
    pub(crate) offset: Option<u64>,
    /// Write it to this file (written under a temporary name, renamed into place) instead of
    /// standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct GetMetadataArgs {
    /// The log; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// The record's name (every record of that name is printed, one JSON object a line).
    #[arg(long, short = 'n')]
    pub(crate) name: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AddCommand {
    /// Add a file as an attachment (MCAP).
    Attachment(AddAttachmentArgs),
    /// Add a metadata record (MCAP; BDDF file annotations).
    Metadata(AddMetadataArgs),
}

#[derive(Debug, Args)]
pub(crate) struct AddAttachmentArgs {
    /// The log to add to.
    pub(crate) file: PathBuf,
    /// The file to attach.
    #[arg(long = "file", short = 'f', value_name = "PATH")]
    pub(crate) file_to_attach: PathBuf,
    /// Its name in the log (default: the file's name).
    #[arg(long, short = 'n')]
    pub(crate) name: Option<String>,
    /// Its media type.
    #[arg(long, default_value = "application/octet-stream")]
    pub(crate) media_type: String,
    /// Its log time (the forms --start takes; default: now).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub(crate) log_time: Option<u64>,
    /// Its creation time (the forms --start takes; default: the file's modification time).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub(crate) create_time: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct AddMetadataArgs {
    /// The log to add to.
    pub(crate) file: PathBuf,
    /// The record's name.
    #[arg(long, short = 'n')]
    pub(crate) name: String,
    /// A pair, KEY=VALUE; repeat for more.
    #[arg(long, short = 'k', value_name = "KEY=VALUE", required = true, value_parser = parse_pair)]
    pub(crate) key: Vec<(String, String)>,
}

fn parse_pair(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{text:?} is not KEY=VALUE"))
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct InfoArgs {
    /// The log; `-` reads standard input.
    pub(crate) file: PathBuf,
    #[command(flatten)]
    pub(crate) read: ReadSettings,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CatArgs {
    /// The log; `-` reads standard input (in file order, as it arrives).
    pub(crate) file: PathBuf,
    #[command(flatten)]
    pub(crate) read: ReadSettings,
    #[command(flatten)]
    pub(crate) selection: Selection,
    /// Print JSON Lines: topic, log_time, publish_time, sequence, schema_name,
    /// message_encoding, size and data_base64 (or message with --decode). The same as
    /// `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// How to print each message: a line of text, a JSON line, or (for one topic, decoded) a
    /// CSV row: log_time, publish_time and the message's fields flattened to columns
    /// (`pose.position.x`, `ranges.0`), with a header row from the first message.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: CatFormat,
    /// Decode the messages (ROS 1, ROS 2 and JSON encodings).
    #[arg(long)]
    pub(crate) decode: bool,
    /// Stop after this many messages.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CatFormat {
    /// One line of text a message.
    Text,
    /// JSON Lines.
    Json,
    /// CSV of one topic's decoded messages.
    Csv,
}

/// Which messages: topics and a log-time window.
#[derive(Debug, Clone, Args)]
pub struct Selection {
    /// Only this topic: an exact name or a glob (`*` matches any characters, `/` included:
    /// `/camera/*`, `/turtle*`); repeat for more.
    #[arg(
        long = "topic",
        short = 't',
        value_name = "TOPIC",
        visible_alias = "topics"
    )]
    pub(crate) topics: Vec<String>,
    /// Only topics this regular expression matches whole (`/turtle[12]/.*`); repeat for more.
    #[arg(
        long,
        short = 'y',
        value_name = "REGEX",
        visible_alias = "include-topic-regex"
    )]
    pub(crate) topic_regex: Vec<String>,
    /// Leave out this topic (a name or a glob, as --topic); repeat for more.
    #[arg(long, value_name = "TOPIC")]
    pub(crate) exclude_topic: Vec<String>,
    /// Leave out the topics this regular expression matches whole; repeat for more.
    #[arg(long, short = 'n', value_name = "REGEX")]
    pub(crate) exclude_topic_regex: Vec<String>,
    /// Only messages logged at or after this time: seconds since 1970 with an optional
    /// fraction (1396293900.5), nanoseconds (a bare integer from 10^12 on is nanoseconds, below
    /// it seconds), a number with a unit (1396293900s, 250ms, 10us, 5ns), or RFC 3339
    /// (2014-03-31T19:25:00.5Z).
    #[arg(long, short = 'S', value_name = "TIME", value_parser = parse_time)]
    pub(crate) start: Option<u64>,
    /// Only messages logged before this time (same forms as --start).
    #[arg(long, short = 'E', value_name = "TIME", value_parser = parse_time)]
    pub(crate) end: Option<u64>,
    /// --start in whole seconds (as the `mcap` CLI takes it).
    #[arg(long, value_name = "SECONDS", conflicts_with_all = ["start", "start_nsecs"])]
    pub(crate) start_secs: Option<u64>,
    /// --start in nanoseconds.
    #[arg(long, value_name = "NS", conflicts_with = "start")]
    pub(crate) start_nsecs: Option<u64>,
    /// --end in whole seconds.
    #[arg(long, value_name = "SECONDS", conflicts_with_all = ["end", "end_nsecs"])]
    pub(crate) end_secs: Option<u64>,
    /// --end in nanoseconds.
    #[arg(long, value_name = "NS", conflicts_with = "end")]
    pub(crate) end_nsecs: Option<u64>,
}

/// How to write an output log.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct WriteSettings {
    /// Output format (by default from the output's extension: .mcap, .bag, .bddf; a ROS 2 bag
    /// is a directory: pass --format rosbag2).
    #[arg(long, value_enum)]
    pub(crate) format: Option<FormatArg>,
    /// ROS 2 bag storage (default: mcap).
    #[arg(long, value_enum)]
    pub(crate) storage: Option<StorageArg>,
    /// ROS 2 bag zstd compression: each storage file as a whole, or each message.
    #[arg(long, value_enum)]
    pub(crate) compression_mode: Option<CompressionModeArg>,
    /// Chunk compression (default: zstd for MCAP, none for bags; BDDF has none).
    #[arg(long, value_enum)]
    pub(crate) compression: Option<CompressionArg>,
    /// Chunk size in uncompressed bytes (suffixes K, M, G: powers of 1024); 0 writes an
    /// unchunked MCAP file.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub(crate) chunk_size: Option<u64>,
    /// Re-encode messages of the other ROS version: `ros2` (ROS 1 -> CDR, e.g. a ROS 2 MCAP
    /// file from a bag), `ros1`, or `off`. By default only what the output needs: ROS 1 into a
    /// ROS 2 bag, ROS 2 into a ROS 1 bag.
    #[arg(long, value_enum, value_name = "VERSION")]
    pub(crate) migrate: Option<MigrateArg>,
    /// When migrating, carry types that have no counterpart in the other ROS version over with
    /// their own definitions (as rosbags-convert does) instead of refusing them.
    #[arg(long)]
    pub(crate) copy_unmatched_types: bool,
}

/// How to read input logs.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ReadSettings {
    /// The ROS 2 distro (humble, iron, jazzy, kilted) whose standard interfaces define the
    /// types of a ROS 2 bag that stores no definitions (a .db3 before Iron), in place of the
    /// distro its metadata.yaml names; also the distro whose definitions a migration to ROS 2
    /// writes (default jazzy).
    #[arg(long, value_name = "DISTRO", value_parser = parse_distro)]
    pub(crate) distro: Option<robolog::msg::Distro>,
}

fn parse_distro(text: &str) -> Result<robolog::msg::Distro, String> {
    text.parse().map_err(|e: robolog::msg::Error| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MigrateArg {
    /// Messages of ROS 1 become ROS 2 (CDR) messages.
    Ros2,
    /// Messages of ROS 2 become ROS 1 messages.
    Ros1,
    /// Never re-encode: channels the output cannot hold are refused.
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// MCAP.
    Mcap,
    /// ROS bag 2.0.
    Bag,
    /// Boston Dynamics BDDF.
    Bddf,
    /// ROS 2 bag directory (rosbag2).
    Rosbag2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StorageArg {
    /// SQLite 3 (`.db3`).
    Sqlite3,
    /// MCAP.
    Mcap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompressionModeArg {
    /// Each closed storage file (`x_0.db3.zstd`).
    File,
    /// Each message.
    Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompressionArg {
    /// Uncompressed chunks.
    None,
    /// LZ4 (MCAP, bags).
    Lz4,
    /// Zstandard (MCAP).
    Zstd,
    /// bzip2 (bags).
    Bz2,
}

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The input log; `-` reads standard input.
    pub(crate) input: PathBuf,
    /// The output file: written beside it under a temporary name, renamed into place when
    /// complete; `-` writes standard output (name the format with --format).
    pub(crate) output: PathBuf,
    #[command(flatten)]
    pub(crate) read: ReadSettings,
    #[command(flatten)]
    pub(crate) write: WriteSettings,
    #[command(flatten)]
    pub(crate) selection: Selection,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The input logs (any formats); `-` reads standard input.
    #[arg(required = true, num_args = 1..)]
    pub(crate) inputs: Vec<PathBuf>,
    /// The output file; `-` writes standard output.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: PathBuf,
    #[command(flatten)]
    pub(crate) read: ReadSettings,
    #[command(flatten)]
    pub(crate) write: WriteSettings,
    #[command(flatten)]
    pub(crate) selection: Selection,
}

/// The input and output of a command that rewrites one log.
#[derive(Debug, Args)]
pub(crate) struct InOut {
    /// The input log; `-` reads standard input.
    pub(crate) input: PathBuf,
    /// The output: the input's format unless --format or the extension says otherwise; written
    /// under a temporary name and renamed into place when complete (it may be the input's
    /// path); `-` writes standard output.
    #[arg(required_unless_present = "output_option")]
    pub(crate) output: Option<PathBuf>,
    /// The output, as the `mcap` CLI names it.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        conflicts_with = "output"
    )]
    pub(crate) output_option: Option<PathBuf>,
}

impl InOut {
    /// The output path, given either way.
    pub(crate) fn output(&self) -> &std::path::Path {
        self.output
            .as_deref()
            .or(self.output_option.as_deref())
            .unwrap_or(std::path::Path::new("-"))
    }
}

#[derive(Debug, Args)]
pub(crate) struct FilterArgs {
    #[command(flatten)]
    pub(crate) files: InOut,
    #[command(flatten)]
    pub(crate) selection: Selection,
    /// Leave the attachments out.
    #[arg(long)]
    pub(crate) drop_attachments: bool,
    /// Leave the metadata records out.
    #[arg(long)]
    pub(crate) drop_metadata: bool,
    /// The order of the messages written: by log time, as stored in the input (cheapest), or
    /// topic after topic.
    #[arg(long, value_enum, default_value = "log_time")]
    pub(crate) order: OrderArg,
    #[command(flatten)]
    pub(crate) write: WriteSettings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OrderArg {
    /// By log time.
    #[value(name = "log_time", alias = "log-time")]
    LogTime,
    /// As stored in the input.
    File,
    /// Topic after topic, each by log time.
    Topic,
}

#[derive(Debug, Args)]
pub(crate) struct RewriteArgs {
    #[command(flatten)]
    pub(crate) files: InOut,
    #[command(flatten)]
    pub(crate) write: WriteSettings,
}

/// `robolog export`'s arguments (its help is the `Export` command's).
#[cfg(feature = "columnar")]
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The input logs (any formats; topics of several inputs are merged in log-time order),
    /// then the output folder (created if missing).
    #[arg(required = true, num_args = 2.., value_name = "IN... OUT_DIR")]
    pub paths: Vec<PathBuf>,
    /// The file format.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: ExportFormatArg,
    /// Export topics that cannot be decoded (no schema, unknown encoding) as raw bytes
    /// instead of refusing them.
    #[arg(long)]
    pub raw: bool,
    /// Start a new file for a topic when its file reaches this size (suffixes K, M, G;
    /// default 1G): `topic.part-00000.parquet`, `topic.part-00001.parquet`, …
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub max_file_size: Option<u64>,
    /// Which messages are exported.
    #[command(flatten)]
    pub selection: Selection,
}

/// `robolog export --format`.
#[cfg(feature = "columnar")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    /// Parquet (zstd), `.parquet`.
    Parquet,
    /// Arrow IPC file (Feather v2), `.arrow`.
    Arrow,
}

/// `robolog sql`'s arguments (its help is the `Sql` command's).
#[cfg(feature = "columnar")]
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query. Topic tables are named by their topic, in double quotes:
    /// SELECT count(*) FROM "/imu".
    pub query: String,
    /// The logs, or folders of logs.
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Print JSON Lines (one object per row) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print CSV with a header instead of a table.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The log; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Warnings count as problems too (exit 1).
    #[arg(long)]
    pub(crate) strict: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RecoverArgs {
    /// The damaged log; `-` reads standard input.
    pub(crate) input: PathBuf,
    /// The recovered log: the input's format unless --format or the extension (.mcap, .bag,
    /// .bddf) says otherwise (a bag 1.2 becomes 2.0). May be the input's path; `-` writes
    /// standard output.
    pub(crate) output: PathBuf,
    /// Output format (by default the extension's, else the input's).
    #[arg(long, value_enum)]
    pub(crate) format: Option<FormatArg>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum MsgCommand {
    /// Print the ROS 1 md5sum of each message type.
    Md5(MsgArgs),
    /// Print the ROS 2 type hash (RIHS01) of each message, service and action (needs --ros2).
    Hash(MsgArgs),
    /// Print a type's full definition bundle, as ROS 1 tools store it in bags (ROS 2: the
    /// `ros2msg` layout rosbag2 reads).
    Show(MsgArgs),
    /// Validate definitions: syntax, every dependency present, md5sums (ROS 2: type hashes)
    /// computable.
    Check(MsgArgs),
}

#[derive(Debug, Args)]
pub(crate) struct MsgArgs {
    /// Package trees (folders holding <pkg>/msg/*.msg, srv/, action/), .msg/.srv/.action files,
    /// definition bundles, or (with --ros2) `ros2msg`/`ros2idl` schemas and .idl files.
    #[arg(required_unless_present = "distro", num_args = 1..)]
    pub(crate) paths: Vec<PathBuf>,
    /// The type (pkg/Type, or ROS 2 pkg/msg/Type): of a file, or the one to pick from the
    /// folders.
    #[arg(long = "type", value_name = "pkg/Type")]
    pub(crate) type_name: Option<String>,
    /// Parse with the ROS 2 (rosidl) rules instead of ROS 1. builtin_interfaces/Time and
    /// Duration and service_msgs/ServiceEventInfo are known without a definition.
    #[arg(long)]
    pub(crate) ros2: bool,
    /// With --ros2: take what the paths do not define from this distro's bundled standard
    /// interfaces (humble, iron, jazzy, kilted); with --type alone, the type itself.
    #[arg(long, value_name = "DISTRO", requires = "ros2")]
    pub(crate) distro: Option<String>,
}
