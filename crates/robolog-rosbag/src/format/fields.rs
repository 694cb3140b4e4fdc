//! Record header fields: `field_len:u32 name '=' value`, in any order.

use crate::error::{Error, RecordKind, Result};
use crate::format::time::RosTime;

/// One `name=value` field of a record header, borrowed from the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) value: &'a [u8],
    /// Absolute offset of the field's length prefix.
    pub(crate) offset: u64,
    pub(crate) kind: RecordKind,
}

/// Calls `visit` for every field of `header` (whose first byte is at absolute `base`), in file
/// order. Names and values are split at the first `=`, so values may contain `=`.
#[inline]
pub(crate) fn for_each_field<'a>(
    header: &'a [u8],
    base: u64,
    kind: RecordKind,
    mut visit: impl FnMut(Field<'a>) -> Result<()>,
) -> Result<()> {
    let mut pos = 0usize;
    while pos < header.len() {
        let offset = base + pos as u64;
        let len = match header.get(pos..pos + 4) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            None => {
                return Err(Error::malformed(
                    kind,
                    offset,
                    "header ends inside a field length",
                ));
            }
        };
        pos += 4;
        let Some(field) = header.get(pos..).and_then(|rest| rest.get(..len)) else {
            return Err(Error::malformed(
                kind,
                offset,
                format!(
                    "header field of {len} bytes runs past the {} bytes that remain",
                    header.len() - pos
                ),
            ));
        };
        pos += len;
        let Some(eq) = field.iter().position(|&b| b == b'=') else {
            return Err(Error::malformed(kind, offset, "header field without '='"));
        };
        visit(Field {
            name: &field[..eq],
            value: &field[eq + 1..],
            offset,
            kind,
        })?;
    }
    Ok(())
}

impl Field<'_> {
    fn width_error(&self, expected: usize) -> Error {
        Error::malformed(
            self.kind,
            self.offset,
            format!(
                "field {} has {} bytes, expected {expected}",
                String::from_utf8_lossy(self.name),
                self.value.len()
            ),
        )
    }

    #[inline]
    pub(crate) fn u8(&self) -> Result<u8> {
        match self.value {
            [b] => Ok(*b),
            _ => Err(self.width_error(1)),
        }
    }

    #[inline]
    pub(crate) fn u32(&self) -> Result<u32> {
        match self.value {
            [a, b, c, d] => Ok(u32::from_le_bytes([*a, *b, *c, *d])),
            _ => Err(self.width_error(4)),
        }
    }

    #[inline]
    pub(crate) fn u64(&self) -> Result<u64> {
        let bytes: [u8; 8] = self.value.try_into().map_err(|_| self.width_error(8))?;
        Ok(u64::from_le_bytes(bytes))
    }

    #[inline]
    pub(crate) fn time(&self) -> Result<RosTime> {
        let bytes: [u8; 8] = self.value.try_into().map_err(|_| self.width_error(8))?;
        Ok(RosTime::from_le_bytes(bytes))
    }

    pub(crate) fn string(&self) -> String {
        String::from_utf8_lossy(self.value).into_owned()
    }
}

/// Fails with "missing field" when `value` is `None`.
pub(crate) fn required<T>(
    value: Option<T>,
    kind: RecordKind,
    offset: u64,
    name: &str,
) -> Result<T> {
    value.ok_or_else(|| Error::malformed(kind, offset, format!("missing field {name}")))
}

/// Appends one header field.
pub(crate) fn write_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) -> Result<()> {
    let len = name.len() + 1 + value.len();
    let len = u32::try_from(len).map_err(|_| Error::TooLarge {
        what: "header field",
        len: len as u64,
    })?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(name);
    out.push(b'=');
    out.extend_from_slice(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_at_first_equals_and_check_widths() {
        let mut header = Vec::new();
        write_field(&mut header, b"op", &[7]).unwrap();
        write_field(&mut header, b"topic", b"a=b").unwrap();
        write_field(&mut header, b"conn", &[1, 0, 0]).unwrap();
        let mut seen = Vec::new();
        for_each_field(&header, 100, RecordKind::Connection, |f| {
            seen.push((f.name.to_vec(), f.value.to_vec(), f.offset));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen[1], (b"topic".to_vec(), b"a=b".to_vec(), 108));
        let mut conn = None;
        let err = for_each_field(&header, 0, RecordKind::Connection, |f| {
            if f.name == b"conn" {
                conn = Some(f.u32()?);
            }
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("expected 4"), "{err}");
        let mut bad = header.clone();
        bad.truncate(header.len() - 1);
        assert!(for_each_field(&bad, 0, RecordKind::Connection, |_| Ok(())).is_err());
        assert!(
            for_each_field(
                &[3, 0, 0, 0, b'a', b'b', b'c'],
                0,
                RecordKind::Chunk,
                |_| Ok(())
            )
            .is_err()
        );
    }
}
