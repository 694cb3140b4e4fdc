//! The single-pass writer.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use robolog_framing::AtomicFile;

use crate::block_writer::{BlockWriter, SeriesIndexBuilder};
use crate::error::{Error, PodError};
use crate::file_descriptor::{Checksum, new_file_descriptor};
use crate::identifier::identifier_hash;
use crate::pod::{PodElement, SampleShape, encode};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::series_block_index::BlockEntry;
use crate::proto::series_descriptor::DataType;
use crate::proto::{
    DataDescriptor, DescriptorBlock, MessageTypeDescriptor, PodType, PodTypeDescriptor,
    SeriesDescriptor, SeriesIdentifier,
};
use crate::time::timestamp_from_nanos;

/// The POD batch size other writers use: samples are gathered into blocks of at most this many
/// bytes.
pub const DEFAULT_POD_BLOCK_BYTES: usize = 2048;

/// File-wide writer settings.
///
/// ```
/// use std::collections::BTreeMap;
/// use robolog_bddf::{SeriesOptions, WriteOptions};
/// let file = WriteOptions::new()
///     .annotations(BTreeMap::from([("robot".to_owned(), "spot-7".to_owned())]))
///     .pod_block_bytes(4096);
/// let series = SeriesOptions::new()
///     .additional_index_names(["seq"])
///     .description("odometry");
/// # let _ = (file, series);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    annotations: BTreeMap<String, String>,
    pod_block_bytes: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            annotations: BTreeMap::new(),
            pod_block_bytes: DEFAULT_POD_BLOCK_BYTES,
        }
    }
}

impl WriteOptions {
    /// The defaults: no annotations, POD blocks of [`DEFAULT_POD_BLOCK_BYTES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// File annotations (metadata), stored in the first block.
    pub fn annotations(mut self, annotations: BTreeMap<String, String>) -> Self {
        self.annotations = annotations;
        self
    }

    /// Adds one file annotation to those set so far (replacing one of the same key).
    pub fn annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.annotations.insert(key.into(), value.into());
        self
    }

    /// Target size of POD data blocks: samples are appended to a block while it stays within
    /// this many bytes; a sample as large as the target gets a block of its own. A series can
    /// override it ([`SeriesOptions::pod_block_bytes`]).
    pub fn pod_block_bytes(mut self, bytes: usize) -> Self {
        self.pod_block_bytes = bytes;
        self
    }
}

/// Per-series settings (none by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SeriesOptions {
    annotations: BTreeMap<String, String>,
    additional_index_names: Vec<String>,
    description: String,
    pod_block_bytes: Option<usize>,
}

impl SeriesOptions {
    /// No annotations, no additional indexes, no description.
    pub fn new() -> Self {
        Self::default()
    }

    /// Series annotations (metadata), such as `units` (UCUM).
    pub fn annotations(mut self, annotations: BTreeMap<String, String>) -> Self {
        self.annotations = annotations;
        self
    }

    /// Names of additional int64 indexes each data block carries (message series only).
    pub fn additional_index_names<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.additional_index_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Free-text description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// POD series only: overrides [`WriteOptions::pod_block_bytes`].
    pub fn pod_block_bytes(mut self, bytes: usize) -> Self {
        self.pod_block_bytes = Some(bytes);
        self
    }
}

#[derive(Debug)]
enum SeriesState {
    Message {
        additional_indexes: usize,
    },
    Pod {
        shape: SampleShape,
        block_bytes: usize,
        batch: Vec<u8>,
        batch_time: i64,
    },
}

#[derive(Debug)]
struct WriterSeries {
    index: SeriesIndexBuilder,
    state: SeriesState,
}

impl WriterSeries {
    fn write_block<W: Write>(
        &mut self,
        out: &mut BlockWriter<W>,
        series_index: u32,
        timestamp_ns: i64,
        additional_indexes: &[i64],
        data: &[u8],
    ) -> Result<(), Error> {
        let timestamp = timestamp_from_nanos(timestamp_ns);
        let descriptor = DataDescriptor {
            series_index,
            timestamp: Some(timestamp),
            additional_indexes: additional_indexes.to_vec(),
        };
        let file_offset = out.write_data(&descriptor, data)?;
        self.index.entries.push(BlockEntry {
            timestamp: Some(timestamp),
            file_offset,
            additional_indexes: descriptor.additional_indexes,
        });
        self.index.total_bytes += data.len() as u64;
        Ok(())
    }

    fn batch_len(&self) -> usize {
        match &self.state {
            SeriesState::Pod { batch, .. } => batch.len(),
            SeriesState::Message { .. } => 0,
        }
    }

    /// Writes the POD batch, if any, as one block.
    fn flush_pod<W: Write>(
        &mut self,
        out: &mut BlockWriter<W>,
        series_index: u32,
    ) -> Result<(), Error> {
        let SeriesState::Pod {
            batch, batch_time, ..
        } = &mut self.state
        else {
            return Ok(());
        };
        if batch.is_empty() {
            return Ok(());
        }
        let data = std::mem::take(batch);
        let time = *batch_time;
        let result = self.write_block(out, series_index, time, &[], &data);
        if let SeriesState::Pod { batch, .. } = &mut self.state {
            // Keep the allocation for the next batch.
            *batch = data;
            batch.clear();
        }
        result
    }
}

/// Writes a BDDF file in one pass to any [`Write`]: descriptors and data blocks as they come,
/// then the indexes and the SHA-1 trailer in [`BddfWriter::finish`].
///
/// Maps are written in sorted key order, so the same calls always give the same bytes. Memory
/// grows with the number of blocks (the index is written at the end), never with their size.
/// A writer dropped without `finish` leaves a file without index, which
/// [`recover`](crate::recover()) repairs.
///
/// Wrap unbuffered outputs such as a `File` in a `BufWriter` ([`BddfWriter::create`] does).
#[derive(Debug)]
pub struct BddfWriter<W: Write> {
    out: BlockWriter<W>,
    series: Vec<WriterSeries>,
    specs: BTreeMap<BTreeMap<String, String>, u32>,
    pod_block_bytes: usize,
    pod_scratch: Vec<u8>,
}

impl BddfWriter<BufWriter<AtomicFile>> {
    /// Creates a file at `path`. It appears under that name only when [`BddfWriter::finish`]
    /// succeeds and the result is committed with [`AtomicFile::commit`]:
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut writer = robolog_bddf::BddfWriter::create("out.bddf", Default::default())?;
    /// // … add series, write blocks …
    /// writer.finish()?.into_inner().map_err(|e| e.into_error())?.commit()?;
    /// # Ok(()) }
    /// ```
    pub fn create(path: impl AsRef<Path>, options: WriteOptions) -> Result<Self, Error> {
        let file = AtomicFile::create(path).map_err(|e| Error::io(0, e))?;
        Self::with_options(BufWriter::new(file), options)
    }
}

impl<W: Write> BddfWriter<W> {
    /// Starts a file with default options (no annotations, 2048-byte POD blocks).
    pub fn new(out: W) -> Result<Self, Error> {
        Self::with_options(out, WriteOptions::default())
    }

    /// Starts a file: writes the magic and the file descriptor.
    pub fn with_options(out: W, options: WriteOptions) -> Result<Self, Error> {
        let mut out = BlockWriter::new(out)?;
        out.write_descriptor(&DescriptorBlock {
            descriptor: Some(Descriptor::FileDescriptor(new_file_descriptor(
                options.annotations,
            ))),
        })?;
        Ok(Self {
            out,
            series: Vec::new(),
            specs: BTreeMap::new(),
            pod_block_bytes: options.pod_block_bytes,
            pod_scratch: Vec::new(),
        })
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.out.position()
    }

    /// Number of series added so far.
    pub fn series_count(&self) -> usize {
        self.series.len()
    }

    /// Adds a series of opaque messages and writes its descriptor; returns its series index.
    ///
    /// `message_type` gives the content type (`application/protobuf`, `text/plain`, …) and the
    /// type name. Series may be added at any time, between data blocks of other series.
    ///
    /// A second series with the same `spec` is refused, even with another series type, because
    /// other readers look series up by spec.
    pub fn add_message_series(
        &mut self,
        identifier: SeriesIdentifier,
        message_type: MessageTypeDescriptor,
        options: SeriesOptions,
    ) -> Result<u32, Error> {
        let state = SeriesState::Message {
            additional_indexes: options.additional_index_names.len(),
        };
        self.add_series(
            identifier,
            DataType::MessageType(message_type),
            options,
            state,
        )
    }

    /// Adds a series of POD samples of `pod_type`, each sample of shape `dimensions` (empty for
    /// scalars, `[3]` for 3-vectors, `[rows, cols]` for row-major matrices); returns its index.
    ///
    /// The reference Python POD reader cannot read series with dimensions (other tools can);
    /// POD series carry no additional indexes.
    pub fn add_pod_series(
        &mut self,
        identifier: SeriesIdentifier,
        pod_type: PodType,
        dimensions: &[u32],
        options: SeriesOptions,
    ) -> Result<u32, Error> {
        let next_index = u32::try_from(self.series.len()).unwrap_or(u32::MAX);
        let pod_error = |source| Error::Pod {
            series_index: next_index,
            offset: None,
            source,
        };
        let shape = SampleShape::new(pod_type as i32, dimensions).map_err(pod_error)?;
        if !options.additional_index_names.is_empty() {
            return Err(pod_error(PodError::AdditionalIndexes));
        }
        let block_bytes = options.pod_block_bytes.unwrap_or(self.pod_block_bytes);
        let state = SeriesState::Pod {
            shape,
            block_bytes,
            batch: Vec::new(),
            batch_time: 0,
        };
        let data_type = DataType::PodType(PodTypeDescriptor {
            pod_type: pod_type as i32,
            dimension: dimensions.to_vec(),
        });
        self.add_series(identifier, data_type, options, state)
    }

    fn add_series(
        &mut self,
        identifier: SeriesIdentifier,
        data_type: DataType,
        options: SeriesOptions,
        state: SeriesState,
    ) -> Result<u32, Error> {
        if let Some(&existing) = self.specs.get(&identifier.spec) {
            return Err(Error::DuplicateSpec {
                spec: identifier.spec,
                existing,
            });
        }
        let series_index = u32::try_from(self.series.len()).map_err(|_| Error::BlockTooLarge {
            size: self.series.len() as u64,
        })?;
        let hash = identifier_hash(&identifier);
        let descriptor = SeriesDescriptor {
            series_index,
            series_identifier: Some(identifier.clone()),
            identifier_hash: hash,
            data_type: Some(data_type),
            annotations: options.annotations,
            additional_index_names: options.additional_index_names,
            description: options.description,
        };
        let descriptor_offset = self.out.write_descriptor(&DescriptorBlock {
            descriptor: Some(Descriptor::SeriesDescriptor(descriptor)),
        })?;
        self.specs.insert(identifier.spec.clone(), series_index);
        self.series.push(WriterSeries {
            index: SeriesIndexBuilder {
                identifier,
                identifier_hash: hash,
                descriptor_offset,
                entries: Vec::new(),
                total_bytes: 0,
            },
            state,
        });
        Ok(series_index)
    }

    fn series_mut(&mut self, series_index: u32) -> Result<&mut WriterSeries, Error> {
        self.series
            .get_mut(series_index as usize)
            .ok_or(Error::NoSuchSeries(series_index))
    }

    /// Writes one message of a message series without additional indexes.
    ///
    /// An empty `data` is valid BDDF, but the reference Python readers cannot read it back.
    pub fn write_message(
        &mut self,
        series_index: u32,
        timestamp_ns: i64,
        data: &[u8],
    ) -> Result<(), Error> {
        self.write_message_indexed(series_index, timestamp_ns, &[], data)
    }

    /// Writes one message with a value for each of the series' additional indexes.
    pub fn write_message_indexed(
        &mut self,
        series_index: u32,
        timestamp_ns: i64,
        additional_indexes: &[i64],
        data: &[u8],
    ) -> Result<(), Error> {
        let series = self
            .series
            .get_mut(series_index as usize)
            .ok_or(Error::NoSuchSeries(series_index))?;
        match series.state {
            SeriesState::Message {
                additional_indexes: expected,
            } if expected == additional_indexes.len() => {}
            SeriesState::Message {
                additional_indexes: expected,
            } => {
                return Err(Error::AdditionalIndexCount {
                    series_index,
                    expected,
                    found: additional_indexes.len(),
                });
            }
            SeriesState::Pod { .. } => {
                return Err(Error::WrongSeriesKind {
                    series_index,
                    expected: "message",
                });
            }
        }
        series.write_block(
            &mut self.out,
            series_index,
            timestamp_ns,
            additional_indexes,
            data,
        )
    }

    /// Appends POD samples to a POD series whose element type is `T`. `values` holds one or
    /// more whole samples (row-major); the first one is at `timestamp_ns`.
    ///
    /// Samples are batched into blocks (see [`WriteOptions::pod_block_bytes`]); a block's
    /// timestamp is that of its first sample, since the format has no per-sample times.
    pub fn write_pod<T: PodElement>(
        &mut self,
        series_index: u32,
        timestamp_ns: i64,
        values: &[T],
    ) -> Result<(), Error> {
        let series = self.series_mut(series_index)?;
        let SeriesState::Pod { shape, .. } = &series.state else {
            return Err(Error::WrongSeriesKind {
                series_index,
                expected: "POD",
            });
        };
        let pod_error = |source| Error::Pod {
            series_index,
            offset: None,
            source,
        };
        if shape.pod_type != T::POD_TYPE {
            return Err(pod_error(PodError::TypeMismatch {
                expected: shape.pod_type,
                found: T::POD_TYPE,
            }));
        }
        if !values.len().is_multiple_of(shape.values_per_sample) {
            return Err(pod_error(PodError::PartialValues {
                values: values.len(),
                values_per_sample: shape.values_per_sample,
            }));
        }
        let mut bytes = std::mem::take(&mut self.pod_scratch);
        bytes.clear();
        encode(values, &mut bytes);
        let result = self.write_pod_bytes(series_index, timestamp_ns, &bytes);
        self.pod_scratch = bytes;
        result
    }

    /// Appends POD samples given as their little-endian bytes (for copying between files):
    /// `data` must hold whole samples of the series' type and dimensions.
    pub fn write_pod_bytes(
        &mut self,
        series_index: u32,
        timestamp_ns: i64,
        data: &[u8],
    ) -> Result<(), Error> {
        let series = self
            .series
            .get_mut(series_index as usize)
            .ok_or(Error::NoSuchSeries(series_index))?;
        let SeriesState::Pod {
            shape, block_bytes, ..
        } = &series.state
        else {
            return Err(Error::WrongSeriesKind {
                series_index,
                expected: "POD",
            });
        };
        let (bytes_per_sample, block_bytes) = (shape.bytes_per_sample, *block_bytes);
        if !data.len().is_multiple_of(bytes_per_sample) {
            return Err(Error::Pod {
                series_index,
                offset: None,
                source: PodError::PartialSample {
                    len: data.len(),
                    bytes_per_sample,
                },
            });
        }
        for sample in data.chunks_exact(bytes_per_sample) {
            if series.batch_len() > 0 && series.batch_len() + bytes_per_sample > block_bytes {
                series.flush_pod(&mut self.out, series_index)?;
            }
            if let SeriesState::Pod {
                batch, batch_time, ..
            } = &mut series.state
            {
                if batch.is_empty() {
                    *batch_time = timestamp_ns;
                }
                batch.extend_from_slice(sample);
            }
            if bytes_per_sample >= block_bytes {
                series.flush_pod(&mut self.out, series_index)?;
            }
        }
        Ok(())
    }

    /// Writes the partial block of a POD series now (it is otherwise written when full, or at
    /// [`BddfWriter::finish`]).
    pub fn flush_pod(&mut self, series_index: u32) -> Result<(), Error> {
        let series = self
            .series
            .get_mut(series_index as usize)
            .ok_or(Error::NoSuchSeries(series_index))?;
        if !matches!(series.state, SeriesState::Pod { .. }) {
            return Err(Error::WrongSeriesKind {
                series_index,
                expected: "POD",
            });
        }
        series.flush_pod(&mut self.out, series_index)
    }

    /// Writes the partial POD blocks (in series order), the series block indexes, the file
    /// index and the SHA-1 trailer; flushes and returns the output.
    pub fn finish(mut self) -> Result<W, Error> {
        for (series_index, series) in (0u32..).zip(&mut self.series) {
            series.flush_pod(&mut self.out, series_index)?;
        }
        let index = self.series.into_iter().map(|s| s.index).collect();
        self.out.finish(index, Checksum::Sha1).map(|(out, _)| out)
    }
}
