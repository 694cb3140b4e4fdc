//! The indexed reader: footer → summary → chunk indexes, read through the input by position;
//! attachments and metadata read where their indexes point.

use std::path::Path;
use std::sync::Arc;

use robolog_framing::{Bytes, crc32};
use robolog_query::{BufferPool, Input};

use crate::chunks::Shared;
use crate::draft::{self, Dialect};
use crate::error::{McapError, Result};
use crate::linear::{LinearReader, frame_at};
use crate::options::{Layout, ReadOptions};
use crate::parse::attachment_crc_span;
use crate::query::MessageQuery;
use crate::records::{Attachment, AttachmentIndex, MAGIC, Metadata, MetadataIndex, Record, op};
use crate::stream::StreamReader;
use crate::summary::{self, Summary, SummarySource};

/// Reads an MCAP file through its index.
///
/// The file is read by position ([`Input`]): opening reads the footer and the summary section,
/// and a query reads only the chunks (and message indexes) it needs.
///
/// ```
/// use robolog_mcap::{McapReader, Order, Writer, WriteOptions, Message};
/// let mut w = Writer::new(Vec::new(), WriteOptions::default())?;
/// let ch = w.register_channel("/a", "json", 0, Default::default())?;
/// for t in [3u64, 1, 2] {
///     w.write_message(&Message { channel_id: ch, sequence: 0, log_time: t, publish_time: t, data: b"{}" })?;
/// }
/// let reader = McapReader::open(w.finish()?)?;
/// let times: Vec<u64> = reader
///     .messages()
///     .topics(["/a"])
///     .time_range(1..3)
///     .order(Order::LogTime)
///     .iter()?
///     .map(|m| m.map(|m| m.log_time))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(times, [1, 2]);
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
#[derive(Debug, Clone)]
pub struct McapReader {
    pub(crate) shared: Arc<Shared>,
    pub(crate) opts: ReadOptions,
    /// True for a file in the draft layout, read linearly (see [`draft_records`]).
    pub(crate) draft: bool,
    /// Decode buffers, shared by this reader's queries.
    pub(crate) buffers: BufferPool,
}

impl McapReader {
    /// Opens an input (a buffer, a file opened with [`Input::open`], ...) with default options.
    pub fn open(input: impl Into<Input>) -> Result<Self> {
        Self::open_with(input, ReadOptions::default())
    }

    /// Opens the file at `path`, read by position as queries need its parts.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let input = Input::open(path).map_err(|source| McapError::Io { offset: 0, source })?;
        Self::open(input)
    }

    /// Opens an input with `opts`. A file in the pre-ratification draft layout (told by its
    /// footer) is walked front to back at opening and by each query (streamed, when it is not
    /// in memory): its index is not used.
    pub fn open_with(input: impl Into<Input>, opts: ReadOptions) -> Result<Self> {
        let input = input.into();
        let io = |offset: u64| move |source| McapError::Io { offset, source };
        // The draft layout is told by the footer; the same read brings the summary of most
        // files.
        let tail = summary::Tail::read(&input)
            .map_err(io(input.len().saturating_sub(summary::TAIL_LEN)))?;
        let detected = draft::detect_tail(&tail.bytes, input.len());
        if opts.layout == Layout::Ratified && detected == Some(Layout::Draft) {
            return Err(McapError::DraftLayout {
                offset: input.len() - (draft::FOOTER_RECORD_LEN + 8) as u64,
            });
        }
        let dialect = Dialect::choose(opts.layout, || detected);
        let (summary, draft) = if dialect.is_draft() {
            (draft_summary(&input, &opts)?, true)
        } else {
            (
                summary::load(&input, &tail, opts.verify_summary_crc)?,
                false,
            )
        };
        Ok(Self {
            shared: Arc::new(Shared::new(input, summary)),
            opts,
            draft,
            buffers: BufferPool::new(),
        })
    }

    /// The summary: schemas, channels, statistics and indexes.
    pub fn summary(&self) -> &Summary {
        &self.shared.summary
    }

    /// The input the file is read from.
    pub fn input(&self) -> &Input {
        &self.shared.input
    }

    /// True when the file is in the pre-ratification draft layout.
    pub fn is_draft(&self) -> bool {
        self.draft
    }

    /// Starts a message query (all messages in log-time order unless narrowed).
    pub fn messages(&self) -> MessageQuery<'_> {
        MessageQuery::new(self)
    }

    /// The attachment indexes.
    pub fn attachments(&self) -> &[AttachmentIndex<'static>] {
        &self.shared.summary.attachment_indexes
    }

    /// The metadata indexes.
    pub fn metadata_indexes(&self) -> &[MetadataIndex<'static>] {
        &self.shared.summary.metadata_indexes
    }

    /// The record an index entry points at (`length` 0: as long as the record says), read
    /// whole: its bytes, and where its content starts and ends in them.
    fn record_at(&self, offset: u64, length: u64, expected: u8) -> Result<(Bytes, usize, usize)> {
        let name = crate::records::record_name(expected);
        let cut = || McapError::Truncated {
            offset,
            record: name,
            what: "record",
        };
        let read = |len: u64| {
            self.shared
                .input
                .read(offset..offset.saturating_add(len))
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => cut(),
                    _ => McapError::Io { offset, source: e },
                })
        };
        let record = if length >= 9 {
            read(length)?
        } else {
            let prefix = read(9)?;
            let own = u64::from_le_bytes(prefix[1..9].try_into().map_err(|_| cut())?);
            read(own.saturating_add(9))?
        };
        let (opcode, start, end) = frame_at(&record, 0)?.ok_or_else(cut)?;
        if opcode != expected || (length != 0 && end as u64 != length) {
            return Err(McapError::invalid(
                offset,
                name,
                format!(
                    "the index points at opcode {opcode:#04x} of {end} bytes, expected {name} of {length}"
                ),
            ));
        }
        Ok((record, start, end))
    }

    /// Parses the content of a record of kind `opcode` at `offset`, in the file's layout.
    fn parse<'a>(&self, opcode: u8, content: &'a [u8], offset: u64) -> Result<Record<'a>> {
        self.dialect()
            .parse_record(opcode, content, offset, 0)?
            .ok_or_else(|| McapError::invalid(offset, "record", "empty draft record"))
    }

    /// The layout the file is read in.
    fn dialect(&self) -> Dialect {
        if self.draft {
            Dialect::Draft
        } else {
            Dialect::Ratified
        }
    }

    /// Reads the attachment an index entry points at, checking its CRC.
    pub fn read_attachment(&self, index: &AttachmentIndex<'_>) -> Result<Attachment<'static>> {
        let expected = self.dialect().attachment_op();
        let (record, start, end) = self.record_at(index.offset, index.length, expected)?;
        match self.parse(expected, &record[start..end], index.offset)? {
            Record::Attachment(a) => {
                if self.opts.verify_attachment_crcs && a.crc != 0 && self.dialect().has_data_crcs()
                {
                    let covered = record
                        .get(9..9 + attachment_crc_span(&a))
                        .unwrap_or_default();
                    let computed = crc32(covered);
                    if computed != a.crc {
                        return Err(McapError::CrcMismatch {
                            offset: index.offset,
                            what: "attachment",
                            stored: a.crc,
                            computed,
                        });
                    }
                }
                Ok(a.into_owned())
            }
            _ => Err(McapError::invalid(
                index.offset,
                "Attachment",
                "not an attachment",
            )),
        }
    }

    /// Reads the Metadata record an index entry points at.
    pub fn read_metadata(&self, index: &MetadataIndex<'_>) -> Result<Metadata<'static>> {
        let (record, start, end) = self.record_at(index.offset, index.length, op::METADATA)?;
        match self.parse(op::METADATA, &record[start..end], index.offset)? {
            Record::Metadata(m) => Ok(m.into_owned()),
            _ => Err(McapError::invalid(
                index.offset,
                "Metadata",
                "not a metadata record",
            )),
        }
    }
}

/// A summary for a draft file, from a linear pass (draft files are small and rare; their index
/// section is not trusted to match the ratified one).
fn draft_summary(input: &Input, opts: &ReadOptions) -> Result<Summary> {
    let mut s = summary::scan(&[], 0, "draft layout")?;
    s.source = SummarySource::Scan;
    draft_records(input, opts, |record| {
        match record? {
            Record::Header(h) => s.header = Some(h.into_owned()),
            Record::Schema(x) => {
                s.schemas
                    .entry(x.id)
                    .or_insert_with(|| Arc::new(x.into_owned()));
            }
            Record::Channel(x) => {
                s.channels
                    .entry(x.id)
                    .or_insert_with(|| Arc::new(x.into_owned()));
            }
            Record::Statistics(x) => s.statistics = Some(x),
            Record::AttachmentIndex(x) => s.attachment_indexes.push(x.into_owned()),
            Record::Footer(f) => s.footer = Some(f),
            _ => {}
        }
        Ok(())
    })?;
    Ok(s)
}

/// Hands each record of a file in the draft layout to `visit`, front to back, chunks' records
/// included, and stops at the first error `visit` returns: the records of a file in memory
/// read in place, those of another (a file read by position, a remote object) streamed in a
/// piece at a time, so that memory holds a record, not the file.
pub(crate) fn draft_records(
    input: &Input,
    opts: &ReadOptions,
    mut visit: impl FnMut(Result<Record<'_>>) -> Result<()>,
) -> Result<()> {
    let opts = opts.clone().layout(Layout::Draft);
    match input.in_memory() {
        Some(all) => {
            let mut reader = LinearReader::with_options(all.clone(), opts.threads(0));
            while let Some(record) = reader.next_record() {
                visit(record)?;
            }
        }
        None => {
            let verify_crc = opts.verify_summary_crc;
            let mut reader = StreamReader::with_options(input.stream(0..input.len()), opts)
                .told_length(input.len());
            // A stream passes the draft index before its footer says where it starts: the
            // footer's CRC is checked by position when the footer is reached, as the linear
            // reader checks it in memory.
            let footer = input
                .len()
                .saturating_sub((draft::FOOTER_RECORD_LEN + MAGIC.len()) as u64);
            while let Some(record) = reader.next_record() {
                let record = match record {
                    Ok(Record::Footer(f)) if verify_crc => {
                        draft::verify_footer_input(input, footer).map(|()| Record::Footer(f))
                    }
                    other => other,
                };
                visit(record)?;
            }
        }
    }
    Ok(())
}
