//! Whole input files as shared, cheaply sliceable [`Bytes`].

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bytes::Bytes;

/// Opens a file as `Bytes`: memory-mapped when the `mmap` feature is on (the default), read into
/// memory otherwise. Readers slice the result without copying, and the slices can travel to other
/// threads.
///
/// A mapped file must not be truncated by another process while it is mapped (the operating
/// system would fault on the missing pages). Files that are still being appended to are fine: the
/// mapping covers the length the file had when it was opened. Use [`read_file`] when even that is
/// not acceptable.
pub fn load_file(path: impl AsRef<Path>) -> io::Result<Bytes> {
    #[cfg(feature = "mmap")]
    {
        map_file(path)
    }
    #[cfg(not(feature = "mmap"))]
    {
        read_file(path)
    }
}

/// Memory-maps a file read-only.
#[cfg(feature = "mmap")]
pub fn map_file(path: impl AsRef<Path>) -> io::Result<Bytes> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(Bytes::new());
    }
    // SAFETY: the mapping is read-only and private to this process. The remaining hazard of
    // mmap, another process truncating the file while it is mapped, is documented on
    // `load_file`; it is the price of reading multi-gigabyte logs without copying them, and
    // `read_file` is offered for callers who cannot accept it.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file)? };
    Ok(Bytes::from_owner(map))
}

/// Reads a whole file into memory.
pub fn read_file(path: impl AsRef<Path>) -> io::Result<Bytes> {
    let mut file = File::open(path)?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    Ok(Bytes::from(data))
}
