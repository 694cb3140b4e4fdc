//! Writing format 2.0 the way ros_comm's Python `rosbag.Bag` does, byte for byte.

use std::io::{Seek, SeekFrom, Write};

use robolog_framing::{Compressor, Lz4Frame};

use crate::chunk::ChunkCompression;
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::format::framing::{
    OP_CHUNK, OP_CHUNK_INFO, OP_CONNECTION, OP_FILE_HEADER, OP_INDEX_DATA, OP_MSG_DATA,
    build_header, write_record,
};
use crate::format::time::RosTime;
use crate::format::version::Version;
use crate::linear::{IndexEntry, counts_in_order};

/// `header_len + data_len` of the file header record (padding convention A, as ROS writes).
const FILE_HEADER_LEN: usize = 4096;

/// How a [`Writer`] lays out the bag.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    compression: ChunkCompression,
    bz2_level: u32,
    chunk_threshold: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            compression: ChunkCompression::None,
            bz2_level: 9,
            chunk_threshold: 768 * 1024,
        }
    }
}

impl WriteOptions {
    /// Uncompressed chunks of 768 KiB, as `rosbag record` writes by default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The chunk compression. LZ4 chunks are written in the `roslz4` frame profile (FLG 0x64,
    /// BD 0x60) that ROS tools require.
    pub fn compression(mut self, compression: ChunkCompression) -> Self {
        self.compression = compression;
        self
    }

    /// The bzip2 level, 1 to 9 (9 by default, as ROS).
    pub fn bz2_level(mut self, level: u32) -> Self {
        self.bz2_level = level.clamp(1, 9);
        self
    }

    /// A chunk is closed as soon as its uncompressed size exceeds this many bytes.
    pub fn chunk_threshold(mut self, bytes: usize) -> Self {
        self.chunk_threshold = bytes;
        self
    }
}

#[derive(Debug)]
struct ChunkInfoOut {
    pos: u64,
    start: RosTime,
    end: RosTime,
    counts: Vec<(u32, u32)>,
}

#[derive(Debug)]
struct ConnectionSlot {
    connection: Connection,
    /// True once its CONNECTION record is in a chunk.
    in_chunk: bool,
}

/// Writes a ROS bag 2.0.
///
/// Chunks are built in memory and written whole when they close, each followed by its index
/// records and a flush, so a writer that is killed leaves a file whose closed chunks all survive
/// (`reindex` recovers them). The output needs `Seek` only once, in [`Writer::finish`], to fill
/// in the file header.
///
/// ```
/// use std::io::Cursor;
/// use robolog_rosbag::{Bag, ChunkCompression, WriteOptions, Writer};
///
/// let options = WriteOptions::new().compression(ChunkCompression::Lz4);
/// let mut writer = Writer::with_options(Cursor::new(Vec::new()), options)?;
/// let chatter = writer.add_connection(
///     "/chatter",
///     "std_msgs/String",
///     "992ce8a1687cec8c8bd883ec73ca41d1",
///     "string data\n",
/// )?;
/// writer.write(chatter, 1_600_000_000_000_000_000, b"\x05\0\0\0hello")?;
/// let bytes = writer.finish()?.into_inner();
///
/// let bag = Bag::open(bytes)?;
/// assert_eq!(bag.summary().message_count, 1);
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
#[derive(Debug)]
pub struct Writer<W: Write + Seek> {
    out: W,
    /// Where the version line starts in `out`.
    origin: u64,
    /// Bytes written since `origin`.
    pos: u64,
    options: WriteOptions,
    connections: Vec<ConnectionSlot>,
    chunk: Vec<u8>,
    chunk_entries: Vec<IndexEntry>,
    chunk_infos: Vec<ChunkInfoOut>,
    compressed: Vec<u8>,
}

impl<W: Write + Seek> Writer<W> {
    /// Starts a bag with the default options (uncompressed, 768 KiB chunks).
    pub fn new(out: W) -> Result<Self> {
        Self::with_options(out, WriteOptions::default())
    }

    /// Starts a bag at the current position of `out`.
    pub fn with_options(mut out: W, options: WriteOptions) -> Result<Self> {
        if !options.compression.codec().is_enabled() {
            return Err(Error::InvalidInput(format!(
                "compiled without {} support: enable the `{}` feature",
                options.compression,
                options.compression.name()
            )));
        }
        let origin = out.stream_position()?;
        let mut writer = Self {
            out,
            origin,
            pos: 0,
            options,
            connections: Vec::new(),
            chunk: Vec::new(),
            chunk_entries: Vec::new(),
            chunk_infos: Vec::new(),
            compressed: Vec::new(),
        };
        writer.emit(Version::V2_0.line())?;
        let header = file_header(0, 0, 0)?;
        writer.emit(&header)?;
        Ok(writer)
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    fn slot(&mut self, conn: u32) -> Result<&mut ConnectionSlot> {
        self.connections
            .iter_mut()
            .find(|s| s.connection.id == conn)
            .ok_or(Error::UnknownConnection { conn })
    }

    /// Adds a connection with the four standard header fields and returns its id (0, 1, … in
    /// order of addition).
    pub fn add_connection(
        &mut self,
        topic: &str,
        message_type: &str,
        md5sum: &str,
        message_definition: &str,
    ) -> Result<u32> {
        let id = self
            .connections
            .iter()
            .map(|s| s.connection.id + 1)
            .max()
            .unwrap_or(0);
        self.insert_connection(Connection::new(
            id,
            topic,
            message_type,
            md5sum,
            message_definition,
        ))
    }

    /// Adds a connection as given: its id, topic and every header field (callerid, latching and
    /// any others, in their order). Fails when the id is taken.
    pub fn insert_connection(&mut self, connection: Connection) -> Result<u32> {
        let id = connection.id;
        if self.connections.iter().any(|s| s.connection.id == id) {
            return Err(Error::InvalidInput(format!(
                "connection id {id} is already in use"
            )));
        }
        self.connections.push(ConnectionSlot {
            connection,
            in_chunk: false,
        });
        Ok(id)
    }

    /// Writes a message on connection `conn` at `time_ns`.
    pub fn write(&mut self, conn: u32, time_ns: u64, data: &[u8]) -> Result<()> {
        self.write_at(conn, RosTime::from_ns(time_ns)?, data)
    }

    pub(crate) fn write_at(&mut self, conn: u32, time: RosTime, data: &[u8]) -> Result<()> {
        let slot = self.slot(conn)?;
        if !slot.in_chunk {
            slot.in_chunk = true;
            let record = connection_record(&slot.connection)?;
            self.chunk.extend_from_slice(&record);
        }
        let offset = u32::try_from(self.chunk.len()).map_err(|_| Error::TooLarge {
            what: "chunk",
            len: self.chunk.len() as u64,
        })?;
        let header = build_header(&[
            (b"op", &[OP_MSG_DATA]),
            (b"conn", &conn.to_le_bytes()),
            (b"time", &time.to_le_bytes()),
        ])?;
        write_record(&mut self.chunk, &header, data)?;
        self.chunk_entries.push(IndexEntry { conn, time, offset });
        if self.chunk.len() > self.options.chunk_threshold {
            self.close_chunk()?;
        }
        Ok(())
    }

    /// Closes the open chunk (if any) and flushes the output, so that everything written so
    /// far survives a crash.
    pub fn flush(&mut self) -> Result<()> {
        self.close_chunk()?;
        self.out.flush()?;
        Ok(())
    }

    fn close_chunk(&mut self) -> Result<()> {
        if self.chunk_entries.is_empty() && self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.chunk);
        let entries = std::mem::take(&mut self.chunk_entries);
        let result = self.write_chunk(self.options.compression, &chunk, &entries);
        // Keep the allocation for the next chunk.
        self.chunk = chunk;
        self.chunk.clear();
        result
    }

    /// Writes a chunk holding `content` (whole CONNECTION and MSG_DATA records) whose messages
    /// are `entries`, then its index records, and flushes.
    pub(crate) fn write_chunk(
        &mut self,
        compression: ChunkCompression,
        content: &[u8],
        entries: &[IndexEntry],
    ) -> Result<()> {
        let size = u32::try_from(content.len()).map_err(|_| Error::TooLarge {
            what: "chunk",
            len: content.len() as u64,
        })?;
        let mut compressed = std::mem::take(&mut self.compressed);
        compressed.clear();
        let data: &[u8] = match compression {
            ChunkCompression::None => content,
            other => {
                Compressor::new(other.codec())
                    .with_level(self.options.bz2_level as i32)
                    .with_lz4_frame(Lz4Frame::RosCompatible)
                    .compress(content, &mut compressed)
                    .map_err(|source| Error::Codec {
                        offset: self.pos,
                        source,
                    })?;
                &compressed
            }
        };
        let data_len = u32::try_from(data.len()).map_err(|_| Error::TooLarge {
            what: "compressed chunk",
            len: data.len() as u64,
        })?;
        let header = build_header(&[
            (b"op", &[OP_CHUNK]),
            (b"compression", compression.name().as_bytes()),
            (b"size", &size.to_le_bytes()),
        ])?;
        let pos = self.pos;
        let mut head = Vec::with_capacity(header.len() + 8);
        head.extend_from_slice(&(header.len() as u32).to_le_bytes());
        head.extend_from_slice(&header);
        head.extend_from_slice(&data_len.to_le_bytes());
        self.emit(&head)?;
        self.emit(data)?;
        self.compressed = compressed;
        let index = index_records(entries)?;
        self.emit(&index)?;
        self.out.flush()?;
        self.record_chunk(pos, entries);
        Ok(())
    }

    /// Copies a chunk record and the bytes after it (its index records) verbatim, or rebuilds
    /// the index records when `index` is `None`. For reindex, whose chunks carry their own
    /// connection records.
    pub(crate) fn copy_chunk(
        &mut self,
        chunk_record: &[u8],
        index: Option<&[u8]>,
        entries: &[IndexEntry],
    ) -> Result<()> {
        let pos = self.pos;
        self.emit(chunk_record)?;
        match index {
            Some(bytes) => self.emit(bytes)?,
            None => {
                let rebuilt = index_records(entries)?;
                self.emit(&rebuilt)?;
            }
        }
        self.record_chunk(pos, entries);
        Ok(())
    }

    /// Marks a connection as already written inside a chunk (a copied one).
    pub(crate) fn mark_in_chunk(&mut self, conn: u32) {
        if let Some(slot) = self
            .connections
            .iter_mut()
            .find(|s| s.connection.id == conn)
        {
            slot.in_chunk = true;
        }
    }

    fn record_chunk(&mut self, pos: u64, entries: &[IndexEntry]) {
        let mut times = entries.iter().map(|e| e.time);
        let first = times.next().unwrap_or_default();
        let (start, end) = times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)));
        self.chunk_infos.push(ChunkInfoOut {
            pos,
            start,
            end,
            counts: counts_in_order(entries),
        });
    }

    /// Closes the last chunk, writes the index section (connections, then chunk infos) and
    /// fills in the file header. Returns the output, positioned after the bag.
    pub fn finish(self) -> Result<W> {
        self.finish_with_count().map(|(out, _)| out)
    }

    /// [`Writer::finish`], also returning the number of chunks written.
    pub(crate) fn finish_with_count(mut self) -> Result<(W, u64)> {
        self.close_chunk()?;
        let index_pos = self.pos;
        self.connections.sort_by_key(|s| s.connection.id);
        let mut index = Vec::new();
        for slot in &self.connections {
            index.extend_from_slice(&connection_record(&slot.connection)?);
        }
        for info in &self.chunk_infos {
            let count = info.counts.len() as u32;
            let header = build_header(&[
                (b"op", &[OP_CHUNK_INFO]),
                (b"ver", &1u32.to_le_bytes()),
                (b"chunk_pos", &info.pos.to_le_bytes()),
                (b"start_time", &info.start.to_le_bytes()),
                (b"end_time", &info.end.to_le_bytes()),
                (b"count", &count.to_le_bytes()),
            ])?;
            let mut data = Vec::with_capacity(8 * info.counts.len());
            for (conn, n) in &info.counts {
                data.extend_from_slice(&conn.to_le_bytes());
                data.extend_from_slice(&n.to_le_bytes());
            }
            write_record(&mut index, &header, &data)?;
        }
        self.emit(&index)?;
        let conn_count = u32::try_from(self.connections.len()).map_err(|_| Error::TooLarge {
            what: "connection count",
            len: self.connections.len() as u64,
        })?;
        let chunk_count = u32::try_from(self.chunk_infos.len()).map_err(|_| Error::TooLarge {
            what: "chunk count",
            len: self.chunk_infos.len() as u64,
        })?;
        let header = file_header(index_pos, conn_count, chunk_count)?;
        let line = Version::V2_0.line().len() as u64;
        self.out.seek(SeekFrom::Start(self.origin + line))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::Start(self.origin + self.pos))?;
        self.out.flush()?;
        let chunks = self.chunk_infos.len() as u64;
        Ok((self.out, chunks))
    }
}

/// The FILE_HEADER record, padded with spaces so that header and data total 4096 bytes.
fn file_header(index_pos: u64, conn_count: u32, chunk_count: u32) -> Result<Vec<u8>> {
    let header = build_header(&[
        (b"op", &[OP_FILE_HEADER]),
        (b"index_pos", &index_pos.to_le_bytes()),
        (b"conn_count", &conn_count.to_le_bytes()),
        (b"chunk_count", &chunk_count.to_le_bytes()),
    ])?;
    let padding = vec![b' '; FILE_HEADER_LEN.saturating_sub(header.len())];
    let mut record = Vec::with_capacity(8 + FILE_HEADER_LEN);
    write_record(&mut record, &header, &padding)?;
    Ok(record)
}

/// A CONNECTION record (Python field order: op, topic, conn).
pub(crate) fn connection_record(connection: &Connection) -> Result<Vec<u8>> {
    let header = build_header(&[
        (b"op", &[OP_CONNECTION]),
        (b"topic", connection.topic.as_bytes()),
        (b"conn", &connection.id.to_le_bytes()),
    ])?;
    let mut record = Vec::new();
    write_record(&mut record, &header, &connection.encode_fields()?)?;
    Ok(record)
}

/// One INDEX_DATA record per connection, in order of first appearance, entries sorted by time
/// (stable, so equal times keep their order), as ros_comm writes them.
pub(crate) fn index_records(entries: &[IndexEntry]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (conn, count) in counts_in_order(entries) {
        let mut mine: Vec<&IndexEntry> = entries.iter().filter(|e| e.conn == conn).collect();
        mine.sort_by_key(|e| e.time);
        let header = build_header(&[
            (b"op", &[OP_INDEX_DATA]),
            (b"conn", &conn.to_le_bytes()),
            (b"ver", &1u32.to_le_bytes()),
            (b"count", &count.to_le_bytes()),
        ])?;
        let mut data = Vec::with_capacity(12 * mine.len());
        for e in mine {
            data.extend_from_slice(&e.time.to_le_bytes());
            data.extend_from_slice(&e.offset.to_le_bytes());
        }
        write_record(&mut out, &header, &data)?;
    }
    Ok(out)
}
