//! Record framing: `header_len:u32 header data_len:u32 data`.

use robolog_framing::ByteReader;

use crate::error::{Error, RecordKind, Result};
use crate::format::fields::write_field;

pub(crate) const OP_MSG_DEF: u8 = 0x01;
pub(crate) const OP_MSG_DATA: u8 = 0x02;
pub(crate) const OP_FILE_HEADER: u8 = 0x03;
pub(crate) const OP_INDEX_DATA: u8 = 0x04;
pub(crate) const OP_CHUNK: u8 = 0x05;
pub(crate) const OP_CHUNK_INFO: u8 = 0x06;
pub(crate) const OP_CONNECTION: u8 = 0x07;

/// A record whose header is complete, borrowed from the input. Its data may be cut short (a
/// truncated file): `data` holds the bytes that exist, `data_len` what the record declares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordView<'a> {
    /// Absolute offset of the record (its `header_len` field).
    pub(crate) offset: u64,
    pub(crate) header: &'a [u8],
    pub(crate) data_len: u32,
    pub(crate) data: &'a [u8],
}

impl<'a> RecordView<'a> {
    pub(crate) fn header_offset(&self) -> u64 {
        self.offset + 4
    }

    pub(crate) fn data_offset(&self) -> u64 {
        self.offset + 8 + self.header.len() as u64
    }

    /// True when all `data_len` bytes of data are present.
    pub(crate) fn is_complete(&self) -> bool {
        self.data.len() == self.data_len as usize
    }

    /// Bytes the record occupies in the input (all of it when complete).
    pub(crate) fn len(&self) -> usize {
        8 + self.header.len() + self.data.len()
    }

    /// The error for a record whose data is cut short.
    pub(crate) fn truncated(&self, kind: RecordKind) -> Error {
        Error::framing(
            kind,
            robolog_framing::Error::new(
                self.data_offset(),
                "record data",
                robolog_framing::ErrorKind::LengthPastEnd {
                    length: u64::from(self.data_len),
                    available: self.data.len() as u64,
                },
            ),
        )
    }
}

/// Views the record at the start of `buf`, whose first byte is at absolute offset `base`.
///
/// Fails with a truncation error when the header or the data length field is cut; the data
/// itself may be cut (see [`RecordView::is_complete`]).
pub(crate) fn view_record(buf: &[u8], base: u64) -> Result<RecordView<'_>> {
    let mut r = ByteReader::with_base(buf, base);
    let header = r
        .read_bytes_u32("record header")
        .map_err(|e| Error::framing(RecordKind::Record, e))?;
    let data_len = r
        .read_u32("record data length")
        .map_err(|e| Error::framing(RecordKind::Record, e))?;
    let rest = r.rest();
    let available = rest.len().min(data_len as usize);
    Ok(RecordView {
        offset: base,
        header,
        data_len,
        data: &rest[..available],
    })
}

/// Views the record at the start of `buf`, which must be complete.
pub(crate) fn read_record(buf: &[u8], base: u64, kind: RecordKind) -> Result<RecordView<'_>> {
    let record = view_record(buf, base).map_err(|e| match e {
        Error::Framing { source, .. } => Error::framing(kind, source),
        other => other,
    })?;
    if !record.is_complete() {
        return Err(record.truncated(kind));
    }
    Ok(record)
}

/// Builds a record header from `(name, value)` fields, in the order given.
pub(crate) fn build_header(fields: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    let mut header = Vec::with_capacity(fields.iter().map(|(n, v)| 5 + n.len() + v.len()).sum());
    for (name, value) in fields {
        write_field(&mut header, name, value)?;
    }
    Ok(header)
}

/// Appends a whole record.
pub(crate) fn write_record(out: &mut Vec<u8>, header: &[u8], data: &[u8]) -> Result<()> {
    let header_len = u32::try_from(header.len()).map_err(|_| Error::TooLarge {
        what: "record header",
        len: header.len() as u64,
    })?;
    let data_len = u32::try_from(data.len()).map_err(|_| Error::TooLarge {
        what: "record data",
        len: data.len() as u64,
    })?;
    out.reserve(8 + header.len() + data.len());
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(data);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_complete_and_cut_records() {
        let header = build_header(&[(b"op", &[OP_MSG_DATA])]).unwrap();
        let mut rec = Vec::new();
        write_record(&mut rec, &header, b"hello").unwrap();
        let view = view_record(&rec, 10).unwrap();
        assert!(view.is_complete());
        assert_eq!((view.data, view.len()), (&b"hello"[..], rec.len()));
        assert_eq!(view.data_offset(), 10 + 8 + header.len() as u64);
        let cut = view_record(&rec[..rec.len() - 2], 0).unwrap();
        assert_eq!(cut.data, b"hel");
        assert!(
            read_record(&rec[..rec.len() - 2], 0, RecordKind::MessageData)
                .unwrap_err()
                .is_truncation()
        );
        for n in 0..8 + header.len() {
            assert!(
                view_record(&rec[..n], 0).unwrap_err().is_truncation(),
                "{n}"
            );
        }
    }
}
