//! Whole input files read into memory as shared, cheaply sliceable [`Bytes`].

use std::io;
use std::path::Path;

use bytes::Bytes;

/// Reads a whole file into memory. Readers slice the result without copying, and the slices can
/// travel to other threads.
///
/// Readers that need only parts of a file read those by position instead
/// (`robolog_query::Input`); a memory map is an explicit `unsafe` opt-in there
/// (`robolog_query::Input::map`), never hidden behind a safe function.
pub fn read_file(path: impl AsRef<Path>) -> io::Result<Bytes> {
    std::fs::read(path).map(Bytes::from)
}
