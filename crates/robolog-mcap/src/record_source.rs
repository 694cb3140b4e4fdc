//! The record-by-record walk that the linear and streaming readers share. Each frames records
//! its own way (slices of a file in memory; buffers filled from a `Read`). Above the framing,
//! both read the draft layout the same way: a two-in-one draft record is handed out as two
//! ratified records, and a draft record without a ratified counterpart is skipped.

use crate::draft::Dialect;
use crate::error::Result;
use crate::records::Record;

/// Where a framed record's content sits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Inside the decompressed records of the open chunk, or at the top level.
    pub(crate) in_chunk: bool,
    /// Which of the ratified records a two-in-one draft record is read as.
    pub(crate) part: u8,
    pub(crate) opcode: u8,
    /// Absolute offset of a top-level record, or the offset inside the chunk records.
    pub(crate) offset: u64,
    /// The content's range in the buffer it sits in.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A reader that frames records one at a time.
pub(crate) trait RecordSource {
    /// The layout the file is read in.
    fn dialect(&self) -> Dialect;

    /// The second part of a two-in-one draft record, while it is still to be handed out.
    fn pending(&mut self) -> &mut Option<Slot>;

    /// Frames the next record (checking whatever the reader checks on the way).
    fn next_frame(&mut self) -> Option<Result<Slot>>;

    /// The content of a record that [`RecordSource::next_frame`] framed.
    fn content(&self, slot: &Slot) -> &[u8];

    /// The next record's place: the pending second part of a draft record first.
    fn advance(&mut self) -> Option<Result<Slot>> {
        if let Some(pending) = self.pending().take() {
            return Some(Ok(pending));
        }
        let slot = self.next_frame();
        if let Some(Ok(slot)) = &slot
            && self.dialect().has_two_parts(slot.opcode)
        {
            *self.pending() = Some(Slot { part: 1, ..*slot });
        }
        slot
    }

    /// The next record, parsed; `None` at the end.
    fn next_parsed(&mut self) -> Option<Result<Record<'_>>> {
        let dialect = self.dialect();
        let slot = loop {
            let slot = match self.advance()? {
                Ok(slot) => slot,
                Err(e) => return Some(Err(e)),
            };
            if !dialect.skips(&*self, &slot) {
                break slot;
            }
        };
        let content = self.content(&slot);
        dialect
            .parse_record(slot.opcode, content, slot.offset, slot.part)
            .transpose()
    }
}
