//! The 4-byte encapsulation header in front of every CDR payload: representation identifier
//! (version, framing, byte order) and two option bytes.

use crate::error::Error;
use crate::value::ByteOrder;

/// The size of the encapsulation header.
pub const HEADER_LEN: usize = 4;

/// The encapsulations this crate reads and writes (the representation identifier of the
/// header).
///
/// `CDR_LE`/`CDR_BE` (XCDR1) are what ROS 2 middlewares write. `PLAIN_CDR2` (XCDR2 without
/// delimiters, kinds `06`/`07`) is what non-ROS DDS recorders write for final types: the same
/// layout except that 8-byte values align to 4. Every other kind (parameter lists, delimited
/// XCDR2) frames members in ways a `.msg` type never asks for, and is refused with
/// [`Error::UnsupportedEncapsulation`] rather than decoded wrongly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Encapsulation {
    /// `00 01`: XCDR1, little endian.
    #[default]
    CdrLe,
    /// `00 00`: XCDR1, big endian.
    CdrBe,
    /// `00 07`: PLAIN_CDR2 (XCDR2, final types), little endian.
    PlainCdr2Le,
    /// `00 06`: PLAIN_CDR2 (XCDR2, final types), big endian.
    PlainCdr2Be,
}

impl Encapsulation {
    /// Reads the header at the start of `message`. The two option bytes are ignored (their
    /// padding count is not needed: up to 3 trailing bytes are accepted anyway).
    ///
    /// ```
    /// use robolog_cdr::{ByteOrder, Encapsulation};
    /// assert_eq!(Encapsulation::from_header(&[0, 1, 0, 0])?, Encapsulation::CdrLe);
    /// assert_eq!(Encapsulation::from_header(&[0, 0, 0, 3])?.byte_order(), ByteOrder::BigEndian);
    /// assert!(Encapsulation::from_header(&[0, 3, 0, 0]).is_err()); // PL_CDR_LE
    /// # Ok::<(), robolog_cdr::Error>(())
    /// ```
    pub fn from_header(message: &[u8]) -> Result<Encapsulation, Error> {
        let Some(header) = message.get(..HEADER_LEN) else {
            return Err(Error::NoHeader { len: message.len() });
        };
        match [header[0], header[1]] {
            [0, 0x01] => Ok(Encapsulation::CdrLe),
            [0, 0x00] => Ok(Encapsulation::CdrBe),
            [0, 0x07] => Ok(Encapsulation::PlainCdr2Le),
            [0, 0x06] => Ok(Encapsulation::PlainCdr2Be),
            identifier => Err(Error::UnsupportedEncapsulation {
                identifier,
                name: identifier_name(identifier),
            }),
        }
    }

    /// The header this crate writes: the identifier and two zero option bytes.
    pub fn header(self) -> [u8; HEADER_LEN] {
        match self {
            Encapsulation::CdrLe => [0, 0x01, 0, 0],
            Encapsulation::CdrBe => [0, 0x00, 0, 0],
            Encapsulation::PlainCdr2Le => [0, 0x07, 0, 0],
            Encapsulation::PlainCdr2Be => [0, 0x06, 0, 0],
        }
    }

    /// The byte order of every multi-byte value (lengths and counts included).
    pub fn byte_order(self) -> ByteOrder {
        match self {
            Encapsulation::CdrLe | Encapsulation::PlainCdr2Le => ByteOrder::LittleEndian,
            Encapsulation::CdrBe | Encapsulation::PlainCdr2Be => ByteOrder::BigEndian,
        }
    }

    /// Whether this is XCDR2 (8-byte values align to 4 instead of 8).
    pub fn is_xcdr2(self) -> bool {
        matches!(
            self,
            Encapsulation::PlainCdr2Le | Encapsulation::PlainCdr2Be
        )
    }

    /// The XCDR1 encapsulation (`CDR_LE`/`CDR_BE`) of `order`.
    pub fn cdr(order: ByteOrder) -> Encapsulation {
        match order {
            ByteOrder::LittleEndian => Encapsulation::CdrLe,
            ByteOrder::BigEndian => Encapsulation::CdrBe,
        }
    }

    /// The largest alignment of a primitive: 8 in XCDR1, 4 in XCDR2.
    pub(crate) fn max_align(self) -> usize {
        if self.is_xcdr2() { 4 } else { 8 }
    }
}

/// The name of a representation identifier, for errors.
fn identifier_name(identifier: [u8; 2]) -> &'static str {
    match identifier {
        [0, 0x02] => "PL_CDR_BE",
        [0, 0x03] => "PL_CDR_LE",
        [0, 0x08] => "DELIMITED_CDR2_BE",
        [0, 0x09] => "DELIMITED_CDR2_LE",
        [0, 0x0a] => "PL_CDR2_BE",
        [0, 0x0b] => "PL_CDR2_LE",
        [0, 0x10..=0x15] => "an XTypes ENC_HEADER",
        [0, _] => "an unknown CDR kind",
        _ => "not a CDR encapsulation (the first byte is not 0)",
    }
}
