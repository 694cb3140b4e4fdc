//! Messages handed out by the readers, their payload as `Bytes`.

use robolog_framing::Bytes;

use crate::records::Message;

/// A message whose payload is a `Bytes` slice: zero-copy into the input for uncompressed data,
/// into the decompressed chunk otherwise. It keeps that buffer alive and can travel between
/// threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedMessage {
    /// The channel it was published on.
    pub channel_id: u16,
    /// Sequence number (0 if unused).
    pub sequence: u32,
    /// Recording time, nanoseconds.
    pub log_time: u64,
    /// Publishing time, nanoseconds.
    pub publish_time: u64,
    /// The serialized message.
    pub data: Bytes,
}

impl OwnedMessage {
    /// `m`, whose data lies inside `source`, sharing `source`'s buffer.
    pub(crate) fn sliced(source: &Bytes, m: &Message<'_>) -> Self {
        Self {
            channel_id: m.channel_id,
            sequence: m.sequence,
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: source.slice_ref(m.data),
        }
    }

    /// The message as a borrowed record (to hand to a writer, say).
    pub fn as_record(&self) -> Message<'_> {
        Message {
            channel_id: self.channel_id,
            sequence: self.sequence,
            log_time: self.log_time,
            publish_time: self.publish_time,
            data: &self.data,
        }
    }
}
