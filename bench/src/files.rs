//! The workload files: each workload as MCAP (none/lz4/zstd) and bag 2.0 (none/lz4/bz2), written
//! by our writers, checked with the peer crates, and cached under `target/bench-data/` by a hash
//! of everything that determines their bytes.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use robolog_framing::AtomicFile;
use robolog_mcap::{Compression, Message, WriteOptions as McapOptions, Writer as McapWriter};
use robolog_rosbag::{ChunkCompression, WriteOptions as BagOptions, Writer as BagWriter};
use sha1::{Digest, Sha1};

use super::workload::{Workload, fill};

/// A container format and its chunk compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    Mcap(Compression),
    Bag(ChunkCompression),
}

impl Variant {
    /// Every variant the issue asks for, in table order.
    pub(crate) const ALL: [Variant; 6] = [
        Variant::Mcap(Compression::None),
        Variant::Mcap(Compression::Lz4),
        Variant::Mcap(Compression::Zstd),
        Variant::Bag(ChunkCompression::None),
        Variant::Bag(ChunkCompression::Lz4),
        Variant::Bag(ChunkCompression::Bz2),
    ];

    /// `mcap-lz4`, `bag-bz2`, …
    pub(crate) fn name(self) -> String {
        match self {
            Variant::Mcap(c) => format!("mcap-{}", c.name()),
            Variant::Bag(c) => format!("bag-{}", c.name()),
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The codec of the chunks.
    pub(crate) fn codec(self) -> Compression {
        match self {
            Variant::Mcap(c) => c,
            Variant::Bag(ChunkCompression::None) => Compression::None,
            Variant::Bag(ChunkCompression::Lz4) => Compression::Lz4,
            Variant::Bag(ChunkCompression::Bz2) => Compression::Bz2,
        }
    }

    pub(crate) fn is_bag(self) -> bool {
        matches!(self, Variant::Bag(_))
    }

    fn extension(self) -> &'static str {
        if self.is_bag() { "bag" } else { "mcap" }
    }
}

/// The schema text written for every channel (the benchmark never decodes payloads).
pub(crate) const DEFINITION: &str = "# synthetic benchmark payload\nuint8[] data\n";

/// Our writers' settings for the workload files and the write operation.
pub(crate) fn mcap_options(compression: Compression) -> McapOptions {
    McapOptions::default()
        .compression(compression)
        .profile("ros1")
}

pub(crate) fn bag_options(compression: ChunkCompression) -> BagOptions {
    BagOptions::new().compression(compression)
}

/// A workload file ready to be read.
#[derive(Debug, Clone)]
pub(crate) struct DataFile {
    pub(crate) workload: usize,
    pub(crate) workload_name: &'static str,
    pub(crate) variant: Variant,
    pub(crate) path: PathBuf,
    pub(crate) file_bytes: u64,
}

/// What the generator put in a workload, to check every reader's output against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Totals {
    pub(crate) messages: u64,
    pub(crate) bytes: u64,
}

/// Message and byte counts of the whole workload and of its query.
pub(crate) fn expected(workload: &Workload) -> (Totals, Totals) {
    let (start, end) = workload.query_range();
    let mut all = Totals::default();
    let mut query = Totals::default();
    let mut buf = Vec::new();
    for event in workload.events() {
        fill(workload, event, &mut buf);
        all.messages += 1;
        all.bytes += buf.len() as u64;
        if workload.channels[event.channel].topic == workload.query.topic
            && (start..end).contains(&event.time_ns)
        {
            query.messages += 1;
            query.bytes += buf.len() as u64;
        }
    }
    (all, query)
}

/// [`expected`], cached next to the workload files (generating the full workloads again
/// takes a while).
pub(crate) fn expected_cached(dir: &Path, workload: &Workload) -> Result<(Totals, Totals), String> {
    let mut hasher = Sha1::new();
    hasher.update(workload.fingerprint());
    let path = dir.join(format!(
        "{}-{}.totals",
        workload.name,
        hex::encode(&hasher.finalize()[..8])
    ));
    let parse = |text: &str| -> Option<(Totals, Totals)> {
        let v: Vec<u64> = text
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        match v.as_slice() {
            [a, b, c, d] => Some((
                Totals {
                    messages: *a,
                    bytes: *b,
                },
                Totals {
                    messages: *c,
                    bytes: *d,
                },
            )),
            _ => None,
        }
    };
    if let Some(totals) = fs::read_to_string(&path).ok().as_deref().and_then(parse) {
        return Ok(totals);
    }
    let (all, query) = expected(workload);
    let text = format!(
        "{} {} {} {}\n",
        all.messages, all.bytes, query.messages, query.bytes
    );
    fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((all, query))
}

fn cache_key(workload: &Workload, variant: Variant) -> String {
    let options = match variant {
        Variant::Mcap(c) => format!("{:?}", mcap_options(c).library("")),
        Variant::Bag(c) => format!("{:?}", bag_options(c)),
    };
    let mut hasher = Sha1::new();
    hasher.update(workload.fingerprint());
    hasher.update(variant.name());
    hasher.update(options);
    hasher.update(DEFINITION);
    hex::encode(&hasher.finalize()[..8])
}

/// Writes (or finds in the cache) every file of `workloads`, checking each new one with the peer
/// crate against the generator's totals.
pub(crate) fn prepare(
    dir: &Path,
    workloads: &[Workload],
    variants: &[Variant],
) -> Result<Vec<DataFile>, String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for (index, workload) in workloads.iter().enumerate() {
        let mut totals = None;
        for &variant in variants {
            let path = dir.join(format!(
                "{}-{}-{}.{}",
                workload.name,
                variant.name(),
                cache_key(workload, variant),
                variant.extension()
            ));
            if !path.exists() {
                eprintln!("bench: writing {}", path.display());
                let expected = *totals.get_or_insert_with(|| expected(workload).0);
                write_file(workload, variant, &path)?;
                let read = super::ops::peer_count(variant, &path)?;
                if read != expected {
                    let _ = fs::remove_file(&path);
                    return Err(format!(
                        "the peer crate reads {read:?} from {}, the generator wrote {expected:?}",
                        path.display()
                    ));
                }
            }
            let file_bytes = fs::metadata(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .len();
            files.push(DataFile {
                workload: index,
                workload_name: workload.name,
                variant,
                path,
                file_bytes,
            });
        }
    }
    Ok(files)
}

fn write_file(workload: &Workload, variant: Variant, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
    let file = AtomicFile::create(path).map_err(|e| err(&e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut buf = Vec::new();
    match variant {
        Variant::Mcap(c) => {
            let mut w = McapWriter::new(&mut out, mcap_options(c)).map_err(|e| err(&e))?;
            let ids = mcap_channels(workload, &mut w).map_err(|e| err(&e))?;
            for event in workload.events() {
                fill(workload, event, &mut buf);
                w.write_message(&Message {
                    channel_id: ids[event.channel],
                    sequence: event.seq as u32,
                    log_time: event.time_ns,
                    publish_time: event.time_ns,
                    data: &buf,
                })
                .map_err(|e| err(&e))?;
            }
            w.finish().map_err(|e| err(&e))?;
        }
        Variant::Bag(c) => {
            let mut w = BagWriter::with_options(&mut out, bag_options(c)).map_err(|e| err(&e))?;
            let ids = bag_connections(workload, &mut w).map_err(|e| err(&e))?;
            for event in workload.events() {
                fill(workload, event, &mut buf);
                w.write(ids[event.channel], event.time_ns, &buf)
                    .map_err(|e| err(&e))?;
            }
            w.finish().map_err(|e| err(&e))?;
        }
    }
    out.flush().map_err(|e| err(&e))?;
    let file = out.into_inner().map_err(|e| err(&e.error()))?;
    file.commit().map_err(|e| err(&e))
}

/// Registers the workload's schemas and channels; returns the channel ids by channel index.
pub(crate) fn mcap_channels<W: Write>(
    workload: &Workload,
    w: &mut McapWriter<W>,
) -> robolog_mcap::Result<Vec<u16>> {
    workload
        .channels
        .iter()
        .map(|c| {
            let schema = w.register_schema(c.ros_type, "ros1msg", DEFINITION.as_bytes())?;
            let metadata = BTreeMap::from([("md5sum".into(), c.md5.into())]);
            w.register_channel(c.topic, "ros1", schema, metadata)
        })
        .collect()
}

/// Adds the workload's connections; returns their ids by channel index.
pub(crate) fn bag_connections<W: Write + std::io::Seek>(
    workload: &Workload,
    w: &mut BagWriter<W>,
) -> robolog_rosbag::Result<Vec<u32>> {
    workload
        .channels
        .iter()
        .map(|c| w.add_connection(c.topic, c.ros_type, c.md5, DEFINITION))
        .collect()
}
