//! Reading a `.db3` without SQLite: its pages, b-trees and records, as the SQLite file format
//! describes them (<https://www.sqlite.org/fileformat2.html>), for files SQLite refuses ("database
//! disk image is malformed", a cut file, a `-wal` whose frames never reached the file).
//!
//! Every reachable leaf page of a table is read, and so is every page that no tree reaches but
//! that is shaped like a leaf of the `messages` table (the subtrees below a damaged or missing
//! interior page): every row whose cell and overflow pages are intact is kept. Nothing here
//! trusts a length or a page number before checking it against the bytes that exist.

use std::collections::{BTreeMap, HashMap, HashSet};

/// The 16-byte magic at the start of every SQLite database.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Magics of a WAL file (checksums little- or big-endian).
const WAL_MAGIC_LE: u32 = 0x377f_0682;
const WAL_MAGIC_BE: u32 = 0x377f_0683;

/// Page types.
const INTERIOR_TABLE: u8 = 0x05;
const LEAF_TABLE: u8 = 0x0d;

/// A value of a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

impl Value<'_> {
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub(crate) fn text(&self) -> String {
        match self {
            Value::Text(t) | Value::Blob(t) => String::from_utf8_lossy(t).into_owned(),
            Value::Int(i) => i.to_string(),
            Value::Real(f) => f.to_string(),
            Value::Null => String::new(),
        }
    }
}

/// The pages of a database file (with a `-wal`'s committed frames laid over them).
#[derive(Debug)]
pub(crate) struct Pages<'a> {
    file: &'a [u8],
    page_size: usize,
    usable: usize,
    /// Pages from the `-wal`, by page number: the latest committed version.
    wal: HashMap<u32, &'a [u8]>,
    /// Pages in all (file and `-wal`).
    count: u32,
    /// What was noticed about the header and the `-wal`.
    pub(crate) notes: Vec<String>,
}

impl<'a> Pages<'a> {
    /// The pages of `file`, with `wal` (the `-wal` file's bytes, when there is one). A damaged
    /// header gives the page size of rosbag2's files (4096), and says so.
    pub(crate) fn new(file: &'a [u8], wal: Option<&'a [u8]>) -> Self {
        let mut notes = Vec::new();
        let header_ok = file.len() >= 100 && file[..16] == MAGIC[..];
        let mut page_size = 4096usize;
        let mut reserved = 0usize;
        if header_ok {
            let raw = u16::from_be_bytes([file[16], file[17]]);
            let size = if raw == 1 { 65536 } else { usize::from(raw) };
            if size.is_power_of_two() && (512..=65536).contains(&size) {
                page_size = size;
                reserved = usize::from(file[20]);
            } else {
                notes.push(format!(
                    "the header's page size {raw} is invalid: read as 4096"
                ));
            }
        } else {
            notes.push("no SQLite header: pages read as 4096 bytes".to_owned());
        }
        if reserved >= page_size - 480 {
            reserved = 0;
        }
        let mut pages = Self {
            file,
            page_size,
            usable: page_size - reserved,
            wal: HashMap::new(),
            count: u32::try_from(file.len() / page_size).unwrap_or(u32::MAX),
            notes,
        };
        if let Some(wal) = wal {
            pages.overlay_wal(wal);
        }
        if !file.len().is_multiple_of(page_size) {
            pages.notes.push(format!(
                "the file ends {} bytes into page {}: it was cut",
                file.len() % page_size,
                file.len() / page_size + 1
            ));
        }
        pages
    }

    /// Lays the committed frames of a WAL over the file's pages: each page's last version up to
    /// the last valid commit frame.
    fn overlay_wal(&mut self, wal: &'a [u8]) {
        if wal.len() < 32 {
            return;
        }
        let be = |at: usize| u32::from_be_bytes([wal[at], wal[at + 1], wal[at + 2], wal[at + 3]]);
        let magic = be(0);
        if magic != WAL_MAGIC_LE && magic != WAL_MAGIC_BE {
            self.notes
                .push("the -wal file has no WAL header: ignored".to_owned());
            return;
        }
        let big_endian = magic == WAL_MAGIC_BE;
        let page_size = be(8) as usize;
        if page_size != self.page_size {
            self.notes.push(format!(
                "the -wal file's page size {page_size} is not the database's {}: ignored",
                self.page_size
            ));
            return;
        }
        let (salt1, salt2) = (be(16), be(20));
        let mut sums = checksum(&wal[..24], (0, 0), big_endian);
        if sums != (be(24), be(28)) {
            self.notes
                .push("the -wal file's header checksum is wrong: ignored".to_owned());
            return;
        }
        let frame_len = 24 + page_size;
        let mut pending: Vec<(u32, &'a [u8])> = Vec::new();
        let mut at = 32;
        let mut frames = 0usize;
        while at + frame_len <= wal.len() {
            let page = be(at);
            let commit = be(at + 4);
            if (be(at + 8), be(at + 12)) != (salt1, salt2) {
                break;
            }
            sums = checksum(&wal[at..at + 8], sums, big_endian);
            sums = checksum(&wal[at + 24..at + frame_len], sums, big_endian);
            if sums != (be(at + 16), be(at + 20)) {
                break;
            }
            pending.push((page, &wal[at + 24..at + frame_len]));
            if commit != 0 {
                for (page, data) in pending.drain(..) {
                    self.wal.insert(page, data);
                    self.count = self.count.max(page);
                }
                frames += 1;
            }
            at += frame_len;
        }
        if frames > 0 {
            self.notes.push(format!(
                "{frames} committed transaction(s) read from the -wal file ({} pages)",
                self.wal.len()
            ));
        }
    }

    /// Page `n` (1-based), when it exists whole.
    pub(crate) fn page(&self, n: u32) -> Option<&'a [u8]> {
        if n == 0 {
            return None;
        }
        if let Some(p) = self.wal.get(&n) {
            return Some(p);
        }
        let start = (n as usize - 1).checked_mul(self.page_size)?;
        self.file.get(start..start.checked_add(self.page_size)?)
    }

    /// The b-tree header of page `n`: (type, header offset).
    fn btree(&self, n: u32) -> Option<(u8, usize, &'a [u8])> {
        let page = self.page(n)?;
        let at = if n == 1 { 100 } else { 0 };
        let kind = *page.get(at)?;
        Some((kind, at, page))
    }

    /// The leaf pages of the table b-tree rooted at `root`, in key order, and the pages that
    /// should have been there but were missing or not b-tree pages.
    pub(crate) fn table_leaves(
        &self,
        root: u32,
        visited: &mut HashSet<u32>,
    ) -> (Vec<u32>, Vec<u32>) {
        let (leaves, missing, _) = self.table_tree(root, visited);
        (leaves, missing)
    }

    /// [`Pages::table_leaves`], and the largest key the interior pages name (every row id up
    /// to it existed when those pages were written).
    pub(crate) fn table_tree(
        &self,
        root: u32,
        visited: &mut HashSet<u32>,
    ) -> (Vec<u32>, Vec<u32>, i64) {
        let mut max_key = 0i64;
        let mut leaves = Vec::new();
        let mut missing = Vec::new();
        // Depth-first, left to right, without recursion (a hostile file may nest deeply).
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if !visited.insert(n) {
                continue;
            }
            let Some((kind, at, page)) = self.btree(n) else {
                missing.push(n);
                continue;
            };
            match kind {
                LEAF_TABLE => leaves.push(n),
                INTERIOR_TABLE => {
                    let Some(cells) = cell_offsets(page, at, 12) else {
                        missing.push(n);
                        continue;
                    };
                    let right = be32(page, at + 8);
                    let mut children: Vec<u32> = cells
                        .iter()
                        .filter_map(|&c| page.get(c..c + 4).and_then(|b| be32(b, 0)))
                        .collect();
                    for &c in &cells {
                        if let Some((key, _)) = page.get(c + 4..).and_then(varint) {
                            max_key = max_key.max(key as i64);
                        }
                    }
                    children.extend(right);
                    stack.extend(children.into_iter().rev());
                }
                _ => missing.push(n),
            }
        }
        (leaves, missing, max_key)
    }

    /// The cells of leaf page `n`: (rowid, record payload), each only when the cell and its
    /// overflow pages are intact; and how many cells were not.
    pub(crate) fn leaf_cells(&self, n: u32) -> (Vec<(i64, Vec<u8>)>, usize) {
        let mut rows = Vec::new();
        let mut broken = 0;
        let Some((LEAF_TABLE, at, page)) = self.btree(n) else {
            return (rows, 0);
        };
        let Some(cells) = cell_offsets(page, at, 8) else {
            return (rows, 0);
        };
        for cell in cells {
            match self.table_leaf_cell(page, cell) {
                Some(row) if parse_record(&row.1).is_some() => rows.push(row),
                _ => broken += 1,
            }
        }
        (rows, broken)
    }

    /// A table leaf cell: its rowid and whole payload (overflow pages followed).
    fn table_leaf_cell(&self, page: &'a [u8], at: usize) -> Option<(i64, Vec<u8>)> {
        let TableCell {
            rowid,
            start,
            local,
            len: payload_len,
        } = table_cell(page, at, self.usable)?;
        let u = self.usable;
        let mut out = Vec::with_capacity(local);
        out.extend_from_slice(&page[start..start + local]);
        if local < payload_len {
            // The rest is in a chain of overflow pages: at most as many as the file has.
            let mut next = be32(page.get(start + local..start + local + 4)?, 0)?;
            let mut hops = 0u32;
            while out.len() < payload_len {
                hops += 1;
                if hops > self.count {
                    return None;
                }
                let overflow = self.page(next)?;
                let want = (payload_len - out.len()).min(u - 4);
                out.extend_from_slice(overflow.get(4..4 + want)?);
                next = be32(overflow, 0)?;
            }
        }
        Some((rowid, out))
    }

    /// Every page that is a table leaf and not in `visited`.
    pub(crate) fn unvisited_leaves(&self, visited: &HashSet<u32>) -> Vec<u32> {
        (1..=self.count)
            .filter(|n| !visited.contains(n))
            .filter(|&n| matches!(self.btree(n), Some((LEAF_TABLE, ..))))
            .collect()
    }
}

/// Where a table leaf cell's parts lie in its page.
pub(crate) struct TableCell {
    pub(crate) rowid: i64,
    /// Where the record payload starts.
    pub(crate) start: usize,
    /// Payload bytes in the page (`start..start + local`, checked to lie in it); the rest of
    /// the `len` continues in overflow pages, the first named by the 4 bytes after them.
    pub(crate) local: usize,
    /// The whole payload's length.
    pub(crate) len: usize,
}

/// The table leaf cell at `at` of `page` (`usable` bytes a page): `None` when its header or its
/// local payload does not fit the page.
pub(crate) fn table_cell(page: &[u8], at: usize, usable: usize) -> Option<TableCell> {
    let (len, a) = varint(page.get(at..)?)?;
    let (rowid, b) = varint(page.get(at + a..)?)?;
    let start = at + a + b;
    let len = usize::try_from(len).ok()?;
    let local = table_local_len(usable, len);
    page.get(start..start.checked_add(local)?)?;
    Some(TableCell {
        rowid: rowid as i64,
        start,
        local,
        len,
    })
}

/// How many bytes of a table leaf cell's payload of `len` bytes lie in its page (`usable`
/// bytes a page), the rest continuing in overflow pages.
fn table_local_len(usable: usize, len: usize) -> usize {
    let x = usable - 35;
    if len <= x {
        return len;
    }
    let m = ((usable - 12) * 32 / 255) - 23;
    let k = m + ((len - m) % (usable - 4));
    if k <= x { k } else { m }
}

/// A schema table entry: type (`table`, `index`), root page, CREATE text.
pub(crate) type SchemaEntry = (String, u32, String);

/// The schema table's entries by name, and its pages that are missing or damaged.
pub(crate) fn schema(pages: &Pages<'_>) -> (BTreeMap<String, SchemaEntry>, Vec<u32>) {
    let mut visited = HashSet::new();
    let (leaves, missing) = pages.table_leaves(1, &mut visited);
    let mut out = BTreeMap::new();
    for leaf in leaves {
        let (rows, _) = pages.leaf_cells(leaf);
        for (_, payload) in rows {
            let Some(values) = parse_record(&payload) else {
                continue;
            };
            let [kind, name, _table, root, sql, ..] = values.as_slice() else {
                continue;
            };
            let root = root.int().and_then(|r| u32::try_from(r).ok()).unwrap_or(0);
            out.insert(name.text(), (kind.text(), root, sql.text()));
        }
    }
    (out, missing)
}

/// The offsets of a b-tree page's cells (the cell pointer array after a header of
/// `header_len` bytes at `at`), each checked to lie in the page.
pub(crate) fn cell_offsets(page: &[u8], at: usize, header_len: usize) -> Option<Vec<usize>> {
    let count = usize::from(u16::from_be_bytes([*page.get(at + 3)?, *page.get(at + 4)?]));
    let array = at + header_len;
    let end = array.checked_add(count.checked_mul(2)?)?;
    if end > page.len() {
        return None;
    }
    Some(
        (0..count)
            .map(|i| {
                usize::from(u16::from_be_bytes([
                    page[array + 2 * i],
                    page[array + 2 * i + 1],
                ]))
            })
            .filter(|&c| c >= end && c < page.len())
            .collect(),
    )
}

pub(crate) fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// An SQLite varint: 1 to 9 bytes, big-endian, 7 bits each (8 in the ninth).
#[inline]
pub(crate) fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    // Most varints of a rosbag2 file (serial types, small lengths) are one byte.
    if let Some(&b) = bytes.first()
        && b < 0x80
    {
        return Some((u64::from(b), 1));
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(9).enumerate() {
        if i == 8 {
            return Some(((value << 8) | u64::from(b), 9));
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The values of a record (header of serial types, then the values), or `None` when the
/// record does not fit its payload.
pub(crate) fn parse_record(payload: &[u8]) -> Option<Vec<Value<'_>>> {
    record_values(payload)?.collect()
}

/// The values of a record of exactly `N` columns, without allocating: `None` when it has
/// another number of columns or does not fit its payload.
pub(crate) fn parse_record_of<const N: usize>(payload: &[u8]) -> Option<[Value<'_>; N]> {
    let mut values = record_values(payload)?;
    let mut out = [Value::Null; N];
    for slot in &mut out {
        *slot = values.next()??;
    }
    values.next().is_none().then_some(out)
}

/// The values of the record `payload`, one by one; `None` when its header does not fit it.
fn record_values(payload: &[u8]) -> Option<RecordValues<'_>> {
    let (header_len, at) = varint(payload)?;
    let header_len = usize::try_from(header_len).ok()?;
    if header_len > payload.len() || header_len < at {
        return None;
    }
    Some(RecordValues {
        payload,
        at,
        header_len,
        body: header_len,
    })
}

/// A record's values in column order, each `None` where the record stops fitting its payload
/// (after which there are no more).
struct RecordValues<'a> {
    payload: &'a [u8],
    /// The next serial type's offset in the header.
    at: usize,
    header_len: usize,
    /// The next value's offset.
    body: usize,
}

impl<'a> Iterator for RecordValues<'a> {
    type Item = Option<Value<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.header_len {
            return None;
        }
        let value = self.value();
        if value.is_none() {
            self.at = self.header_len;
        }
        Some(value)
    }
}

impl<'a> RecordValues<'a> {
    fn value(&mut self) -> Option<Value<'a>> {
        let payload = self.payload;
        let (serial, n) = varint(&payload[self.at..self.header_len])?;
        self.at += n;
        let body = self.body;
        let int = |len: usize| -> Option<i64> {
            let bytes = payload.get(body..body + len)?;
            let mut v: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
            for &b in bytes {
                v = (v << 8) | i64::from(b);
            }
            Some(v)
        };
        let (value, len) = match serial {
            0 => (Value::Null, 0),
            1 => (Value::Int(int(1)?), 1),
            2 => (Value::Int(int(2)?), 2),
            3 => (Value::Int(int(3)?), 3),
            4 => (Value::Int(int(4)?), 4),
            5 => (Value::Int(int(6)?), 6),
            6 => (Value::Int(int(8)?), 8),
            7 => {
                let bytes = payload.get(body..body + 8)?;
                let mut raw = [0u8; 8];
                raw.copy_from_slice(bytes);
                (Value::Real(f64::from_be_bytes(raw)), 8)
            }
            8 => (Value::Int(0), 0),
            9 => (Value::Int(1), 0),
            10 | 11 => return None,
            n => {
                let len = usize::try_from((n - 12) / 2).ok()?;
                let bytes = payload.get(body..body.checked_add(len)?)?;
                (
                    if n % 2 == 0 {
                        Value::Blob(bytes)
                    } else {
                        Value::Text(bytes)
                    },
                    len,
                )
            }
        };
        self.body += len;
        Some(value)
    }
}

/// The WAL checksum over `data` (a multiple of 8 bytes), continuing from `sums`.
fn checksum(data: &[u8], mut sums: (u32, u32), big_endian: bool) -> (u32, u32) {
    for chunk in data.chunks_exact(8) {
        let word = |b: &[u8]| {
            let raw = [b[0], b[1], b[2], b[3]];
            if big_endian {
                u32::from_be_bytes(raw)
            } else {
                u32::from_le_bytes(raw)
            }
        };
        let (x0, x1) = (word(&chunk[..4]), word(&chunk[4..]));
        sums.0 = sums.0.wrapping_add(x0).wrapping_add(sums.1);
        sums.1 = sums.1.wrapping_add(x1).wrapping_add(sums.0);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
    }

    #[test]
    fn records_refuse_lengths_past_their_payload() {
        // Header: 3 bytes (len, int8, blob of 2); body: 7, 0xAA 0xBB.
        let ok = [3, 1, 16, 7, 0xaa, 0xbb];
        assert_eq!(
            parse_record(&ok),
            Some(vec![Value::Int(7), Value::Blob(&[0xaa, 0xbb])])
        );
        assert_eq!(parse_record(&ok[..5]), None);
        assert_eq!(parse_record(&[9, 1]), None);
    }
}
