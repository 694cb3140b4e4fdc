//! The sans-io layer: bytes in, records out. Shared by the indexed reader (over `Bytes`), the
//! streaming reader (over `Read`), the writers and reindex.

pub(crate) mod fields;
pub(crate) mod framing;
pub(crate) mod records;
pub(crate) mod time;
pub(crate) mod v12;
pub(crate) mod version;
