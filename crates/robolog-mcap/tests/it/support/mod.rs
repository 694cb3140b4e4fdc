//! Code shared by the test modules (the conformance helpers also by
//! `examples/conformance_runner.rs`).

pub(crate) mod codecs;
pub(crate) mod conformance;
pub(crate) mod draft_writer;

/// A file that is not "in memory" to the readers, so that they read it by position (and stream
/// it where they would slice it), and that records every read.
#[derive(Debug)]
pub(crate) struct ByPosition {
    pub(crate) data: robolog_mcap::Bytes,
    pub(crate) reads: std::sync::Arc<std::sync::Mutex<Vec<std::ops::Range<u64>>>>,
}

impl robolog_query::ReadAt for ByPosition {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
    fn read_at(&self, range: std::ops::Range<u64>) -> std::io::Result<robolog_mcap::Bytes> {
        self.reads.lock().unwrap().push(range.clone());
        Ok(self.data.slice(range.start as usize..range.end as usize))
    }
}
