//! A series as readers describe it: its descriptor plus what is known about its blocks.

use std::collections::BTreeMap;

use crate::block::DataBlock;
use crate::error::Error;
use crate::pod::{PodSamples, SampleShape};
use crate::proto::series_descriptor::DataType;
use crate::proto::{
    MessageTypeDescriptor, PodTypeDescriptor, SeriesDescriptor, SeriesIdentifier,
    StructTypeDescriptor,
};

static EMPTY_IDENTIFIER: SeriesIdentifier = SeriesIdentifier {
    series_type: String::new(),
    spec: BTreeMap::new(),
};

/// What the data blocks of a series hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeriesKind<'a> {
    /// Opaque messages (content type and type name).
    Message(&'a MessageTypeDescriptor),
    /// Packed numbers (element type and sample dimensions).
    Pod(&'a PodTypeDescriptor),
    /// A group of other series.
    Struct(&'a StructTypeDescriptor),
    /// The descriptor does not say.
    Unspecified,
}

/// Counts over the data blocks of a series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockStats {
    /// Number of data blocks.
    pub block_count: u64,
    /// Sum of the payload sizes.
    pub total_bytes: u64,
    /// Earliest and latest block timestamp (ns), `None` without blocks.
    pub time_span: Option<(i64, i64)>,
}

impl BlockStats {
    /// Counts one more block.
    pub(crate) fn add(&mut self, timestamp_ns: i64, payload_len: u64) {
        self.block_count += 1;
        self.total_bytes = self.total_bytes.saturating_add(payload_len);
        self.time_span = Some(match self.time_span {
            None => (timestamp_ns, timestamp_ns),
            Some((first, last)) => (first.min(timestamp_ns), last.max(timestamp_ns)),
        });
    }
}

/// One series of a file: how it is named, what it holds, and its block statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    descriptor: SeriesDescriptor,
    descriptor_offset: u64,
    block_index_offset: Option<u64>,
    stats: BlockStats,
}

impl Series {
    pub(crate) fn new(descriptor: SeriesDescriptor, descriptor_offset: u64) -> Self {
        Self {
            descriptor,
            descriptor_offset,
            block_index_offset: None,
            stats: BlockStats::default(),
        }
    }

    pub(crate) fn with_block_index_offset(mut self, offset: u64) -> Self {
        self.block_index_offset = Some(offset);
        self
    }

    pub(crate) fn stats_mut(&mut self) -> &mut BlockStats {
        &mut self.stats
    }

    /// Position of the series in the file (0, 1, 2, … in registration order); data blocks name
    /// their series by it.
    pub fn index(&self) -> u32 {
        self.descriptor.series_index
    }

    /// The series' name: a type and a spec map.
    pub fn identifier(&self) -> &SeriesIdentifier {
        self.descriptor
            .series_identifier
            .as_ref()
            .unwrap_or(&EMPTY_IDENTIFIER)
    }

    /// The identifier's type, such as `bosdyn:channel`. Not reliable to tell message from POD
    /// series (some writers use `bosdyn:channel` for both): use [`Series::kind`].
    pub fn series_type(&self) -> &str {
        &self.identifier().series_type
    }

    /// The identifier's spec map.
    pub fn spec(&self) -> &BTreeMap<String, String> {
        &self.identifier().spec
    }

    /// The identifier hash stored in the descriptor (see [`identifier_hash`](crate::identifier_hash)
    /// to recompute it).
    pub fn identifier_hash(&self) -> u64 {
        self.descriptor.identifier_hash
    }

    /// What the data blocks hold.
    pub fn kind(&self) -> SeriesKind<'_> {
        match &self.descriptor.data_type {
            Some(DataType::MessageType(m)) => SeriesKind::Message(m),
            Some(DataType::PodType(p)) => SeriesKind::Pod(p),
            Some(DataType::StructType(s)) => SeriesKind::Struct(s),
            None => SeriesKind::Unspecified,
        }
    }

    /// Series metadata, such as `units`.
    pub fn annotations(&self) -> &BTreeMap<String, String> {
        &self.descriptor.annotations
    }

    /// Names of the additional indexes each data block carries.
    pub fn additional_index_names(&self) -> &[String] {
        &self.descriptor.additional_index_names
    }

    /// Free-text description (rarely set).
    pub fn description(&self) -> &str {
        &self.descriptor.description
    }

    /// The descriptor as stored in the file.
    pub fn descriptor(&self) -> &SeriesDescriptor {
        &self.descriptor
    }

    /// File offset of the series descriptor block.
    pub fn descriptor_offset(&self) -> u64 {
        self.descriptor_offset
    }

    /// File offset of the series block index, when the reader used the file's index.
    pub fn block_index_offset(&self) -> Option<u64> {
        self.block_index_offset
    }

    /// Block counts, payload bytes and time span. The indexed reader knows them at open; the
    /// streaming reader counts the blocks it has read so far.
    pub fn stats(&self) -> BlockStats {
        self.stats
    }

    /// Number of data blocks (see [`Series::stats`]).
    pub fn block_count(&self) -> u64 {
        self.stats.block_count
    }

    /// Earliest and latest block timestamp in ns (see [`Series::stats`]).
    pub fn time_span(&self) -> Option<(i64, i64)> {
        self.stats.time_span
    }

    /// Decodes a data block of this POD series into typed values with their dimensions.
    pub fn decode_pod(&self, block: &DataBlock) -> Result<PodSamples, Error> {
        let pod_error = |source| Error::Pod {
            series_index: self.index(),
            offset: Some(block.offset),
            source,
        };
        match self.kind() {
            SeriesKind::Pod(pod) => {
                PodSamples::decode(pod.pod_type, &pod.dimension, &block.data).map_err(pod_error)
            }
            _ => Err(Error::WrongSeriesKind {
                series_index: self.index(),
                expected: "POD",
            }),
        }
    }

    /// The sample shape of a POD series; `None` for other kinds.
    pub fn sample_shape(&self) -> Option<Result<SampleShape, crate::PodError>> {
        match self.kind() {
            SeriesKind::Pod(pod) => Some(SampleShape::new(pod.pod_type, &pod.dimension)),
            _ => None,
        }
    }
}
