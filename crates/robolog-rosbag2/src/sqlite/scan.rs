//! Reading the `messages` table of a `.db3` that nobody writes (opened `immutable`) without
//! SQLite: the leaves of its b-tree in row-id order, read from the file in blocks of
//! consecutive pages, each row's blob copied once into the batch the reader gets.
//!
//! SQLite answers the same query a page at a time through its virtual machine; for a whole
//! table that is most of the reading time. Row-id order is the file order of rosbag2's
//! recorder (it inserts as messages arrive), and it is log-time order exactly when the
//! timestamp index lists the row ids in increasing order, which [`Direct::in_time_order`]
//! checks by walking the index (a few bytes a message). Otherwise, and for anything but a
//! table laid out as rosbag2 and rosbags create it, the caller asks SQLite.
//!
//! Nothing here trusts a length or a page number before checking it; a damaged page is an
//! error naming its byte offset, as SQLite would refuse the file at the same place.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use robolog_framing::Bytes;

use super::pages::{
    TableCell, Value, be32, cell_offsets, parse_record, parse_record_of, table_cell, varint,
};
use super::read::Batcher;
use crate::error::{Error, Result};
use crate::storage::FileQuery;

/// Page types.
const INTERIOR_INDEX: u8 = 0x02;
const INTERIOR_TABLE: u8 = 0x05;
const LEAF_INDEX: u8 = 0x0a;
const LEAF_TABLE: u8 = 0x0d;
/// Bytes read at once by a scan of the table: consecutive pages, so that the file is read in
/// large blocks. The index's pages lie scattered between the table's: they are read one by one.
const SCAN_BLOCK: usize = 256 << 10;
/// B-trees deeper than this are not real files (SQLite's own limit is 20).
const MAX_DEPTH: usize = 40;

/// The `messages` table's b-tree, and its timestamp index, found where a `.db3` keeps them.
#[derive(Debug, Clone)]
pub(crate) struct Direct {
    messages_root: u32,
    index_root: Option<u32>,
}

impl Direct {
    /// The direct reading of a table created as `sql` with root page `root` (and its
    /// timestamp index, when it has one): `None` unless the table's columns are rosbag2's
    /// (`id INTEGER PRIMARY KEY, topic_id, timestamp, data`, in that order), so that a record
    /// is read as SQLite would read it.
    pub(crate) fn new(root: u32, sql: &str, index: Option<(u32, &str)>) -> Option<Direct> {
        let columns = column_definitions(sql)?;
        let names: Vec<String> = columns
            .iter()
            .map(|c| {
                c.split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_matches(|ch| matches!(ch, '"' | '`' | '[' | ']'))
                    .to_ascii_lowercase()
            })
            .collect();
        let id_is_rowid = columns.first().is_some_and(|c| {
            let c = c.to_ascii_uppercase();
            let words: Vec<&str> = c.split_whitespace().collect();
            words.get(1..4) == Some(&["INTEGER", "PRIMARY", "KEY"][..]) && !c.contains("DESC")
        });
        if names != ["id", "topic_id", "timestamp", "data"] || !id_is_rowid || root == 0 {
            return None;
        }
        let index_root = index.and_then(|(root, sql)| {
            let columns = column_definitions(sql)?;
            let words: Vec<String> = columns
                .first()?
                .split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect();
            let plain = columns.len() == 1
                && (words == ["timestamp"] || words == ["timestamp", "asc"])
                && root != 0;
            plain.then_some(root)
        });
        Some(Direct {
            messages_root: root,
            index_root,
        })
    }

    /// Whether row-id order is log-time order (`ORDER BY timestamp, id`): the timestamp index
    /// lists the row ids in increasing order. `false` without an index.
    pub(crate) fn in_time_order(
        &self,
        path: &Path,
        db_path: &Path,
        mapped: Option<Bytes>,
    ) -> Result<bool> {
        let Some(root) = self.index_root else {
            return Ok(false);
        };
        let mut file = PageFile::new(path, db_path, mapped, 0)?;
        // In-order walk: an interior page's keys come between its children.
        struct Frame {
            page: Vec<u8>,
            at: usize,
            cells: Vec<usize>,
            next: usize,
            descended: bool,
        }
        let mut last_rowid = i64::MIN;
        let mut pages_seen = 0u64;
        let mut stack: Vec<Frame> = Vec::new();
        let mut push = |file: &mut PageFile<'_>, stack: &mut Vec<Frame>, n: u32| -> Result<bool> {
            pages_seen += 1;
            if stack.len() >= MAX_DEPTH || pages_seen > u64::from(file.count) {
                return Ok(false);
            }
            let (kind, at, page) = file.btree_page(n)?;
            let header = match kind {
                LEAF_INDEX => 8,
                INTERIOR_INDEX => 12,
                _ => return Ok(false),
            };
            let Some(cells) = cell_offsets(&page, at, header) else {
                return Ok(false);
            };
            stack.push(Frame {
                page,
                at,
                cells,
                next: 0,
                descended: false,
            });
            Ok(true)
        };
        if !push(&mut file, &mut stack, root)? {
            return Ok(false);
        }
        while let Some(frame) = stack.last_mut() {
            let interior = frame.page.get(frame.at) == Some(&INTERIOR_INDEX);
            if frame.next == frame.cells.len() {
                let right = if interior && !frame.descended {
                    frame.descended = true;
                    be32(&frame.page, frame.at + 8)
                } else {
                    None
                };
                match right {
                    Some(child) => {
                        if !push(&mut file, &mut stack, child)? {
                            return Ok(false);
                        }
                    }
                    None => {
                        stack.pop();
                    }
                }
                continue;
            }
            let cell = frame.cells[frame.next];
            if interior && !frame.descended {
                frame.descended = true;
                let Some(child) = be32(&frame.page, cell) else {
                    return Ok(false);
                };
                if !push(&mut file, &mut stack, child)? {
                    return Ok(false);
                }
                continue;
            }
            frame.descended = false;
            frame.next += 1;
            let key_at = if interior { cell + 4 } else { cell };
            let Some(rowid) = index_rowid(&frame.page, key_at, file.usable) else {
                return Ok(false);
            };
            if rowid <= last_rowid {
                return Ok(false);
            }
            last_rowid = rowid;
        }
        Ok(true)
    }

    /// Gives the rows `query` selects, in row-id order, to `batcher` (`Ok(())` also when the
    /// reader hung up). With `mapped`, the file in memory: rows share its pages.
    pub(crate) fn run(
        &self,
        path: &Path,
        db_path: &Path,
        mapped: Option<Bytes>,
        query: &FileQuery,
        batcher: &mut Batcher<'_>,
    ) -> Result<()> {
        let mut file = PageFile::new(path, db_path, mapped, SCAN_BLOCK)?;
        let page_size = file.page_size;
        let damaged = |n: u32, what: &str| damaged(path, page_size, n, what);
        // A page reached twice is a loop or a shared subtree: damage, not a second read.
        let mut visited = vec![0u64; (file.count as usize).div_ceil(64) + 1];
        // Depth-first, left to right, so leaves come in key order; each entry has its depth.
        let mut stack = vec![(self.messages_root, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(damaged(n, "lies deeper than any real b-tree"));
            }
            let at = if n == 1 { 100 } else { 0 };
            // An interior page lies away from the leaves it leads to: it is read alone, so
            // that the block read for the leaves is not spent on it.
            let kind = file.page_alone(n)?[at];
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            if visited[word] & bit != 0 {
                return Err(damaged(n, "is reached twice in the tree"));
            }
            visited[word] |= bit;
            if kind == INTERIOR_TABLE {
                let page = file.page_alone(n)?;
                let cells = cell_offsets(page, at, 12)
                    .ok_or_else(|| damaged(n, "has a cell pointer array past its end"))?;
                let right = be32(page, at + 8).ok_or_else(|| damaged(n, "has a cut header"))?;
                stack.push((right, depth + 1));
                for &c in cells.iter().rev() {
                    let child = be32(page, c).ok_or_else(|| damaged(n, "has a cut cell"))?;
                    stack.push((child, depth + 1));
                }
                continue;
            }
            if kind != LEAF_TABLE {
                return Err(damaged(n, "is not a page of a table b-tree"));
            }
            let cells = cell_offsets(file.page(n)?, at, 8)
                .ok_or_else(|| damaged(n, "has a cell pointer array past its end"))?;
            for cell in cells {
                // A row that continues in overflow pages is assembled in the batch's own
                // bytes, so that its data is copied once.
                let Some((rowid, place)) = file.table_cell(n, cell, batcher.bytes_mut())? else {
                    return Err(damaged(n, "has a cell that does not fit"));
                };
                let (payload, appended_at) = match &place {
                    Payload::InPage(range) => (&file.page(n)?[range.clone()], None),
                    Payload::Appended(range) => {
                        (&batcher.bytes()[range.clone()], Some(range.start))
                    }
                };
                let row = parse_row(payload, rowid, path).map_err(|fault| match fault {
                    RowFault::Damaged(what) => damaged(n, what),
                    RowFault::Wrong(e) => e,
                })?;
                let wanted = query.topics.as_ref().is_none_or(|t| t.contains(&row.topic));
                let more = match (appended_at, wanted) {
                    (Some(base), true) => batcher.push_at(
                        rowid,
                        row.topic,
                        row.timestamp,
                        base + row.data.start..base + row.data.end,
                        false,
                    ),
                    (Some(base), false) => {
                        batcher.bytes_mut().truncate(base);
                        true
                    }
                    (None, true) => {
                        let in_page = place.range();
                        let range = in_page.start + row.data.start..in_page.start + row.data.end;
                        // Pointed to in a file in memory, else copied out of the block.
                        match file.mapped_offset(n)? {
                            Some(at) => batcher.push_at(
                                rowid,
                                row.topic,
                                row.timestamp,
                                at + range.start..at + range.end,
                                true,
                            ),
                            None => {
                                batcher.push(rowid, row.topic, row.timestamp, &file.page(n)?[range])
                            }
                        }
                    }
                    (None, false) => true,
                };
                if !more {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// Fills `buf` from offset `at` of `file`.
fn read_at(file: &mut File, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(buf)
}

/// The error for damage in page `n` of a file of `page_size` pages.
fn damaged(path: &Path, page_size: usize, n: u32, what: &str) -> Error {
    let offset = u64::from(n.saturating_sub(1)) * page_size as u64;
    Error::db3(
        path,
        format!("page {n} (at byte {offset}) of the messages table {what}"),
    )
}

/// The columns of a `messages` row: its topic, time, and where its data lies in the record.
struct Row {
    topic: i64,
    timestamp: i64,
    data: Range<usize>,
}

/// Why a record is not a `messages` row.
enum RowFault {
    /// Damage in its page, which the caller places: what is wrong.
    Damaged(&'static str),
    /// A column of the wrong type.
    Wrong(Error),
}

/// Reads the record `payload` of row `rowid` as rosbag2's `messages` columns.
fn parse_row(payload: &[u8], rowid: i64, path: &Path) -> std::result::Result<Row, RowFault> {
    let values = parse_record_of::<4>(payload).ok_or_else(|| {
        // Told apart only here, off the path of rows that read.
        RowFault::Damaged(if parse_record(payload).is_some() {
            "has a row without four columns"
        } else {
            "has a record that does not fit its cell"
        })
    })?;
    let wrong =
        |what: &str| RowFault::Wrong(Error::db3(path, format!("message row {rowid}: {what}")));
    let (topic, timestamp, blob) = match values {
        [_, Value::Int(topic), Value::Int(timestamp), blob] => (topic, timestamp, blob),
        [_, Value::Int(_), _, _] => return Err(wrong("timestamp is not an integer")),
        _ => return Err(wrong("topic_id is not an integer")),
    };
    let data = match blob {
        Value::Blob(b) | Value::Text(b) => b,
        Value::Null => &payload[payload.len()..],
        _ => return Err(wrong("data is not a blob")),
    };
    // The blob is a slice of `payload`: its place in it.
    let start = data.as_ptr() as usize - payload.as_ptr() as usize;
    Ok(Row {
        topic,
        timestamp,
        data: start..start + data.len(),
    })
}

/// Where a cell's record payload is.
enum Payload {
    /// In its page, at this range.
    InPage(Range<usize>),
    /// Assembled from its page and overflow pages at this range of the batch's bytes.
    Appended(Range<usize>),
}

impl Payload {
    fn range(&self) -> Range<usize> {
        match self {
            Payload::InPage(r) | Payload::Appended(r) => r.clone(),
        }
    }
}

/// The column definitions of a `CREATE TABLE` or `CREATE INDEX` text: what is between its
/// outer parentheses, split at top-level commas.
fn column_definitions(sql: &str) -> Option<Vec<&str>> {
    let open = sql.find('(')?;
    let close = sql.rfind(')')?;
    let inner = sql.get(open + 1..close)?;
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in inner.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim());
    Some(out)
}

/// The row id at the end of an index key (`timestamp, rowid`) whose cell starts at `at`;
/// `None` for anything else (a key that overflows its page is not a timestamp and a row id).
fn index_rowid(page: &[u8], at: usize, usable: usize) -> Option<i64> {
    let (len, n) = varint(page.get(at..)?)?;
    let len = usize::try_from(len).ok()?;
    if len > ((usable - 12) * 64 / 255) - 23 {
        return None;
    }
    let payload = page.get(at + n..at + n + len)?;
    match parse_record_of::<2>(payload)? {
        [Value::Int(_), Value::Int(rowid)] => Some(rowid),
        _ => None,
    }
}

/// The database file's pages: slices of the file when it is in memory (mapped), else read a
/// block of pages at a time into buffers kept for reuse. Blocks start at multiples of their
/// length, and the two used last are kept, because a row's overflow pages may lie just before
/// its leaf (SQLite allocates them before the leaf it splits off), across a block's start.
struct PageFile<'p> {
    path: &'p Path,
    source: Source,
    page_size: usize,
    usable: usize,
    /// Whole pages in the file.
    count: u32,
    /// Bytes read at once (a whole number of pages).
    block_len: usize,
    /// The blocks kept, the one used last first.
    blocks: [Block; 2],
    /// The last page read alone, and its number (0 for none).
    alone: Vec<u8>,
    alone_n: u32,
}

/// Where a [`PageFile`]'s pages come from.
enum Source {
    /// The whole file, in memory.
    Mapped(Bytes),
    /// The file, read a block at a time.
    File(File),
}

/// Consecutive pages read at once.
#[derive(Default)]
struct Block {
    bytes: Vec<u8>,
    /// The file offset of `bytes` (meaningless while `bytes` is empty).
    start: u64,
}

/// Where the page at file offset `start` lies in the `len` bytes from file offset `from`,
/// when they hold all of it.
fn page_within(from: u64, len: usize, start: u64, page_size: usize) -> Option<Range<usize>> {
    let at = usize::try_from(start.checked_sub(from)?).ok()?;
    let end = at.checked_add(page_size)?;
    (end <= len).then_some(at..end)
}

impl Block {
    fn find(&self, start: u64, page_size: usize) -> Option<Range<usize>> {
        page_within(self.start, self.bytes.len(), start, page_size)
    }
}

impl<'p> PageFile<'p> {
    /// The pages of the file at `db_path` (reported as `path`): slices of `mapped`, the file in
    /// memory, when given; else read from the file in blocks of `block_len` bytes.
    fn new(
        path: &'p Path,
        db_path: &Path,
        mapped: Option<Bytes>,
        block_len: usize,
    ) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let bad = || Error::db3(path, "the SQLite header at byte 0 is damaged".to_owned());
        let mut header = [0u8; 100];
        let (source, len) = match mapped {
            Some(bytes) => {
                header.copy_from_slice(bytes.get(..100).ok_or_else(bad)?);
                let len = bytes.len() as u64;
                (Source::Mapped(bytes), len)
            }
            None => {
                let mut file = File::open(db_path).map_err(io)?;
                let len = file.metadata().map_err(io)?.len();
                if len < 100 {
                    return Err(bad());
                }
                file.read_exact(&mut header).map_err(io)?;
                (Source::File(file), len)
            }
        };
        if &header[..16] != b"SQLite format 3\0" {
            return Err(bad());
        }
        let raw = u16::from_be_bytes([header[16], header[17]]);
        let page_size = if raw == 1 { 65536 } else { usize::from(raw) };
        let reserved = usize::from(header[20]);
        if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
            return Err(bad());
        }
        if reserved >= page_size - 480 {
            return Err(bad());
        }
        Ok(PageFile {
            path,
            source,
            page_size,
            usable: page_size - reserved,
            count: u32::try_from(len / page_size as u64).unwrap_or(u32::MAX),
            block_len: block_len.max(page_size) / page_size * page_size,
            blocks: Default::default(),
            alone: Vec::new(),
            alone_n: 0,
        })
    }

    /// Page `n` from a block kept if one holds it, else read by itself (the blocks kept).
    fn page_alone(&mut self, n: u32) -> Result<&[u8]> {
        let start = self.page_start(n)?;
        let Source::File(file) = &mut self.source else {
            return self.page(n);
        };
        if self
            .blocks
            .iter()
            .any(|b| b.find(start, self.page_size).is_some())
        {
            return self.page(n);
        }
        if self.alone_n != n {
            self.alone.resize(self.page_size, 0);
            self.alone_n = 0;
            read_at(file, start, &mut self.alone).map_err(|e| Error::io(self.path, e))?;
            self.alone_n = n;
        }
        Ok(&self.alone)
    }

    /// The file offset of page `n` (1-based); an error unless it is a whole page of the file.
    fn page_start(&self, n: u32) -> Result<u64> {
        if n == 0 || n > self.count {
            return Err(Error::db3(
                self.path,
                format!(
                    "a b-tree names page {n}, but the file has {} whole pages",
                    self.count
                ),
            ));
        }
        Ok(u64::from(n - 1) * self.page_size as u64)
    }

    /// Page `n` (1-based): a slice of the file in memory, or from a block kept or the block
    /// that holds it, read now.
    fn page(&mut self, n: u32) -> Result<&[u8]> {
        let start = self.page_start(n)?;
        let page_size = self.page_size;
        let file = match &mut self.source {
            Source::Mapped(all) => {
                let range = page_within(0, all.len(), start, page_size)
                    .ok_or_else(|| Error::db3(self.path, format!("page {n} is past the end")))?;
                return Ok(&all[range]);
            }
            Source::File(file) => file,
        };
        if self.blocks[0].find(start, page_size).is_none() {
            self.blocks.swap(0, 1);
        }
        if self.blocks[0].find(start, page_size).is_none() {
            // Replace the block used longer ago (now first) with the one that holds page `n`.
            let block_len = self.block_len as u64;
            let whole = u64::from(self.count) * page_size as u64;
            let block_start = start / block_len * block_len;
            let len = block_len.min(whole - block_start) as usize;
            let block = &mut self.blocks[0];
            block.bytes.resize(len, 0);
            block.start = block_start;
            if let Err(e) = read_at(file, block_start, &mut block.bytes) {
                block.bytes.clear();
                return Err(Error::io(self.path, e));
            }
        }
        let range = self.blocks[0]
            .find(start, page_size)
            .ok_or_else(|| Error::db3(self.path, format!("page {n} could not be read")))?;
        Ok(&self.blocks[0].bytes[range])
    }

    /// Where page `n` starts in the file in memory; `None` when the file is read instead.
    fn mapped_offset(&self, n: u32) -> Result<Option<usize>> {
        let start = self.page_start(n)?;
        Ok(matches!(self.source, Source::Mapped(_)).then_some(start as usize))
    }

    /// Page `n` as a b-tree page: its type, where its header starts (after the file header
    /// on page 1) and a copy of its bytes.
    fn btree_page(&mut self, n: u32) -> Result<(u8, usize, Vec<u8>)> {
        let page = self.page(n)?.to_vec();
        let at = if n == 1 { 100 } else { 0 };
        Ok((page[at], at, page))
    }

    /// The row id and record payload of the cell at `at` of table leaf page `n`: in the page,
    /// or assembled at the end of `out` when it continues in overflow pages; `None` when the
    /// cell or its overflow chain is damaged.
    fn table_cell(
        &mut self,
        n: u32,
        at: usize,
        out: &mut Vec<u8>,
    ) -> Result<Option<(i64, Payload)>> {
        let usable = self.usable;
        let count = self.count;
        let page = self.page(n)?;
        let Some(TableCell {
            rowid,
            start,
            local,
            len,
        }) = table_cell(page, at, usable)
        else {
            return Ok(None);
        };
        if local == len {
            return Ok(Some((rowid, Payload::InPage(start..start + len))));
        }
        let Some(mut next) = be32(page, start + local) else {
            return Ok(None);
        };
        let base = out.len();
        out.extend_from_slice(&page[start..start + local]);
        let mut hops = 0u32;
        while out.len() - base < len {
            hops += 1;
            if hops > count || next == 0 || next > count {
                out.truncate(base);
                return Ok(None);
            }
            let overflow = self.page(next)?;
            let want = (len - (out.len() - base)).min(usable - 4);
            let Some(part) = overflow.get(4..4 + want) else {
                out.truncate(base);
                return Ok(None);
            };
            out.extend_from_slice(part);
            next = be32(overflow, 0).unwrap_or(0);
        }
        Ok(Some((rowid, Payload::Appended(base..out.len()))))
    }
}
