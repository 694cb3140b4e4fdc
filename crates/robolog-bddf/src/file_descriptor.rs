//! The file descriptor, the first block of every file: version and checksum kind.

use std::collections::BTreeMap;

use crate::block::{DIGEST_LEN, Located, ParsedBlock, descriptor_name};
use crate::error::Error;
use crate::proto::descriptor_block::Descriptor;
use crate::proto::file_format_descriptor::ChecksumType;
use crate::proto::{FileFormatDescriptor, FileFormatVersion};

/// Offset of the file descriptor block, right after the start magic.
pub(crate) const FILE_DESCRIPTOR_OFFSET: u64 = 4;

/// Whether the trailer's digest is meaningful.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checksum {
    None,
    Sha1,
}

/// The descriptor our writers put at the start of a file.
pub(crate) fn new_file_descriptor(annotations: BTreeMap<String, String>) -> FileFormatDescriptor {
    FileFormatDescriptor {
        version: Some(FileFormatVersion {
            major_version: 1,
            minor_version: 0,
            patch_level: 0,
        }),
        annotations,
        checksum_type: ChecksumType::Sha1 as i32,
        checksum_num_bytes: DIGEST_LEN as u32,
    }
}

/// Checks that this crate can read a file with this descriptor: version 1.0.0, SHA-1 or no
/// checksum, 20 digest bytes.
pub(crate) fn validate(descriptor: &FileFormatDescriptor, offset: u64) -> Result<Checksum, Error> {
    let version = descriptor.version.unwrap_or_default();
    if (
        version.major_version,
        version.minor_version,
        version.patch_level,
    ) != (1, 0, 0)
    {
        return Err(Error::UnsupportedVersion {
            offset,
            major: version.major_version,
            minor: version.minor_version,
            patch: version.patch_level,
        });
    }
    let checksum = match ChecksumType::try_from(descriptor.checksum_type) {
        Ok(ChecksumType::Sha1) => Some(Checksum::Sha1),
        Ok(ChecksumType::None) => Some(Checksum::None),
        _ => None,
    };
    match checksum {
        Some(checksum) if descriptor.checksum_num_bytes as usize == DIGEST_LEN => Ok(checksum),
        _ => Err(Error::UnsupportedChecksum {
            offset,
            checksum_type: descriptor.checksum_type,
            num_bytes: descriptor.checksum_num_bytes,
        }),
    }
}

/// Validates the block parsed at the file descriptor's offset as one.
pub(crate) fn file_descriptor_of(
    located: Located,
) -> Result<(FileFormatDescriptor, Checksum, Located), Error> {
    let descriptor = match &located.block {
        ParsedBlock::Descriptor(block) => match &block.descriptor {
            Some(Descriptor::FileDescriptor(fd)) => fd.clone(),
            _ => {
                return Err(Error::UnexpectedBlock {
                    offset: FILE_DESCRIPTOR_OFFSET,
                    expected: "file descriptor",
                    found: descriptor_name(block),
                });
            }
        },
        ParsedBlock::Data { .. } => {
            return Err(Error::UnexpectedBlock {
                offset: FILE_DESCRIPTOR_OFFSET,
                expected: "file descriptor",
                found: "data block",
            });
        }
        ParsedBlock::End { .. } => {
            return Err(Error::UnexpectedBlock {
                offset: FILE_DESCRIPTOR_OFFSET,
                expected: "file descriptor",
                found: "trailer",
            });
        }
    };
    let checksum = validate(&descriptor, FILE_DESCRIPTOR_OFFSET)?;
    Ok((descriptor, checksum, located))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_we_write() {
        let fd = new_file_descriptor(BTreeMap::new());
        assert_eq!(validate(&fd, 4).unwrap(), Checksum::Sha1);
        let none = FileFormatDescriptor {
            checksum_type: ChecksumType::None as i32,
            ..fd.clone()
        };
        assert_eq!(validate(&none, 4).unwrap(), Checksum::None);
    }

    #[test]
    fn refuses_other_versions_and_checksums() {
        let fd = new_file_descriptor(BTreeMap::new());
        let v2 = FileFormatDescriptor {
            version: Some(FileFormatVersion {
                major_version: 1,
                minor_version: 1,
                patch_level: 0,
            }),
            ..fd.clone()
        };
        assert!(matches!(
            validate(&v2, 4),
            Err(Error::UnsupportedVersion { minor: 1, .. })
        ));
        for (checksum_type, num_bytes) in [(0, 20), (3, 20), (2, 16)] {
            let bad = FileFormatDescriptor {
                checksum_type,
                checksum_num_bytes: num_bytes,
                ..fd.clone()
            };
            assert!(matches!(
                validate(&bad, 4),
                Err(Error::UnsupportedChecksum { .. })
            ));
        }
    }
}
