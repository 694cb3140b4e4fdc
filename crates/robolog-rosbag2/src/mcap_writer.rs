//! Writing an MCAP storage file as rosbag2_storage_mcap does: profile `ros2`, one schema per
//! type (`ros2msg`), one channel per topic with `offered_qos_profiles` and `topic_type_hash`
//! metadata, uncompressed chunks of 768 KiB with message indexes and a full summary, and the
//! `rosbag2` metadata record.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use robolog_framing::Compression;

use crate::definition::Definition;
use crate::error::{Error, Result};
use crate::mcap_storage::METADATA_RECORD;
use crate::metadata::{BagMetadata, TopicMetadata};
use crate::qos::profiles_to_string;

/// rosbag2's chunk size (mcap-cpp's default up to 1.4).
pub(crate) const CHUNK_SIZE: u64 = 786_432;

/// An MCAP storage file being written.
pub(crate) struct McapFileWriter {
    writer: robolog_mcap::Writer<BufWriter<File>>,
    path: PathBuf,
    schemas: HashMap<String, u16>,
    channels: HashMap<u32, u16>,
    /// Bytes the file would have with every message written out uncompressed: what splitting
    /// by size goes by, since the writer's position moves only as chunk data leaves it.
    estimate: u64,
}

impl std::fmt::Debug for McapFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapFileWriter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl McapFileWriter {
    pub(crate) fn create(path: &Path, library: &str, compression: Compression) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let options = robolog_mcap::WriteOptions::new()
            .profile("ros2")
            .library(library)
            .compression(compression)
            .chunk_size(Some(CHUNK_SIZE));
        let writer =
            robolog_mcap::Writer::new_seekable(BufWriter::with_capacity(1 << 16, file), options)
                .map_err(|e| Error::mcap(path, e))?;
        Ok(Self {
            writer,
            path: path.to_path_buf(),
            schemas: HashMap::new(),
            channels: HashMap::new(),
            estimate: 0,
        })
    }

    pub(crate) fn add_topic(
        &mut self,
        id: u32,
        topic: &TopicMetadata,
        definition: &Definition,
        qos_names: bool,
    ) -> Result<()> {
        if self.channels.contains_key(&id) {
            return Ok(());
        }
        let schema = match self.schemas.get(&topic.type_name) {
            Some(&s) => s,
            None => {
                let (encoding, text) = match definition {
                    Definition::Stored { encoding, text } => (encoding.as_str(), text.as_str()),
                    Definition::NotFound { encoding } => (encoding.as_str(), ""),
                    Definition::NotStored => ("", ""),
                };
                let s = self
                    .writer
                    .register_schema(&topic.type_name, encoding, text.as_bytes())
                    .map_err(|e| Error::mcap(&self.path, e))?;
                self.schemas.insert(topic.type_name.clone(), s);
                s
            }
        };
        let mut metadata = BTreeMap::new();
        metadata.insert(
            Cow::Borrowed("offered_qos_profiles"),
            Cow::Owned(profiles_to_string(&topic.offered_qos_profiles, qos_names)),
        );
        metadata.insert(
            Cow::Borrowed("topic_type_hash"),
            Cow::Borrowed(topic.type_description_hash.as_str()),
        );
        let channel = self
            .writer
            .register_channel(&topic.name, &topic.serialization_format, schema, metadata)
            .map_err(|e| Error::mcap(&self.path, e))?;
        self.channels.insert(id, channel);
        Ok(())
    }

    pub(crate) fn write(
        &mut self,
        id: u32,
        log_time: u64,
        publish_time: u64,
        data: &[u8],
    ) -> Result<()> {
        let Some(&channel_id) = self.channels.get(&id) else {
            return Err(Error::Usage(format!(
                "topic {id} is not registered in {}",
                self.path.display()
            )));
        };
        self.writer
            .write_message(&robolog_mcap::Message {
                channel_id,
                sequence: 0,
                log_time,
                publish_time,
                data,
            })
            .map_err(|e| Error::mcap(&self.path, e))?;
        // The Message record (opcode, length, 22 bytes of fields) and its index entry.
        self.estimate += data.len() as u64 + 31 + 16;
        Ok(())
    }

    pub(crate) fn size(&self) -> u64 {
        self.writer.position().max(self.estimate)
    }

    pub(crate) fn close(mut self, metadata: &BagMetadata) -> Result<()> {
        let serialized = metadata.to_serialized();
        self.writer
            .write_metadata(&robolog_mcap::Metadata {
                name: Cow::Borrowed(METADATA_RECORD),
                metadata: BTreeMap::from([(
                    Cow::Borrowed("serialized_metadata"),
                    Cow::Borrowed(serialized.as_str()),
                )]),
            })
            .map_err(|e| Error::mcap(&self.path, e))?;
        let out = self
            .writer
            .finish()
            .map_err(|e| Error::mcap(&self.path, e))?;
        let file = out
            .into_inner()
            .map_err(|e| Error::io(&self.path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }
}
