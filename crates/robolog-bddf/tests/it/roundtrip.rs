//! Writer → readers round trips: every POD type with scalar, vector and matrix samples,
//! messages with additional indexes and negative times, batching, and the writer's refusals.

use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use robolog_bddf::proto::{MessageTypeDescriptor, PodType};
use robolog_bddf::{
    BddfReader, BddfWriter, DataBlock, Error, PodElement, PodError, PodSamples, SeriesKind,
    SeriesOptions, StreamReader, WriteOptions, recover_file, series_identifier,
};

fn text() -> MessageTypeDescriptor {
    MessageTypeDescriptor {
        content_type: "text/plain".into(),
        type_name: "utf8".into(),
        is_metadata: false,
    }
}

fn stream_blocks(file: &[u8]) -> Vec<DataBlock> {
    StreamReader::new(file)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Writes `samples` (each `values_per_sample` long, one per millisecond, starting at -2 ms)
/// into a series of shape `dims`, then checks both readers decode exactly them.
fn pod_round_trip<T: PodElement>(dims: &[u32], samples: &[Vec<T>], block_bytes: usize) {
    let mut writer =
        BddfWriter::with_options(Vec::new(), WriteOptions::new().pod_block_bytes(block_bytes))
            .unwrap();
    let id = series_identifier("bosdyn:signal", [("example:var", format!("{dims:?}"))]);
    let options =
        SeriesOptions::new().annotations(BTreeMap::from([("units".to_owned(), "m".to_owned())]));
    let series = writer
        .add_pod_series(id, T::POD_TYPE, dims, options)
        .unwrap();
    for (i, sample) in samples.iter().enumerate() {
        writer
            .write_pod(series, (i as i64 - 2) * 1_000_000, sample)
            .unwrap();
    }
    let file = writer.finish().unwrap();

    let reader = BddfReader::open(file.clone().into()).unwrap();
    let s = reader.series_by_index(series).unwrap();
    let SeriesKind::Pod(pod) = s.kind() else {
        panic!("POD series expected")
    };
    assert_eq!(pod.pod_type(), T::POD_TYPE);
    assert_eq!(pod.dimension, dims);
    let shape = s.sample_shape().unwrap().unwrap();

    let blocks: Vec<DataBlock> = reader.blocks().collect::<Result<_, _>>().unwrap();
    assert_eq!(blocks, stream_blocks(&file));
    let mut decoded: Vec<Vec<T>> = Vec::new();
    for block in &blocks {
        assert!(block.data.len() <= block_bytes.max(shape.bytes_per_sample));
        let pod: PodSamples = s.decode_pod(block).unwrap();
        assert_eq!(pod.dimensions, dims);
        assert_eq!(pod.pod_type(), T::POD_TYPE);
        // The block's time is that of its first sample.
        assert_eq!(
            block.timestamp_ns,
            (decoded.len() as i64 - 2) * 1_000_000,
            "block at {}",
            block.offset
        );
        for i in 0..pod.sample_count() {
            decoded.push(pod.sample::<T>(i).unwrap().to_vec());
        }
    }
    assert_eq!(decoded, samples);
    let expected_blocks = if shape.bytes_per_sample >= block_bytes {
        samples.len()
    } else {
        samples.len().div_ceil(block_bytes / shape.bytes_per_sample)
    };
    assert_eq!(blocks.len(), expected_blocks);
    assert_eq!(s.block_count(), expected_blocks as u64);
    assert_eq!(
        s.stats().total_bytes,
        (samples.len() * shape.bytes_per_sample) as u64
    );
}

fn samples_of<T: Copy>(values: &[T], per_sample: usize, count: usize) -> Vec<Vec<T>> {
    (0..count)
        .map(|i| {
            (0..per_sample)
                .map(|j| values[(i * per_sample + j) % values.len()])
                .collect()
        })
        .collect()
}

fn every_shape<T: PodElement + Debug>(values: &[T]) {
    for (dims, per_sample) in [
        (&[][..], 1),
        (&[3][..], 3),
        (&[2, 3][..], 6),
        (&[2, 1, 2][..], 4),
    ] {
        for block_bytes in [1, 16, 2048] {
            pod_round_trip::<T>(dims, &samples_of(values, per_sample, 11), block_bytes);
        }
    }
}

#[test]
fn every_pod_type_with_every_shape() {
    every_shape::<i8>(&[i8::MIN, -1, 0, 1, i8::MAX]);
    every_shape::<i16>(&[i16::MIN, -300, 0, 300, i16::MAX]);
    every_shape::<i32>(&[i32::MIN, -70_000, 0, 70_000, i32::MAX]);
    every_shape::<i64>(&[i64::MIN, -(1 << 40), 0, 1 << 40, i64::MAX]);
    every_shape::<u8>(&[0, 1, 127, 128, u8::MAX]);
    every_shape::<u16>(&[0, 1, 40_000, u16::MAX]);
    every_shape::<u32>(&[0, 1, 3_000_000_000, u32::MAX]);
    every_shape::<u64>(&[0, 1, 1 << 63, u64::MAX]);
    every_shape::<f32>(&[f32::MIN, -1.5, 0.0, -0.0, 1e-40, f32::MAX, f32::INFINITY]);
    every_shape::<f64>(&[
        f64::MIN,
        -1.5,
        0.0,
        -0.0,
        5e-324,
        f64::MAX,
        f64::NEG_INFINITY,
    ]);
}

#[test]
fn pod_bytes_are_little_endian_row_major() {
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let m = writer
        .add_pod_series(
            series_identifier("t", [("k", "matrix")]),
            PodType::Uint16,
            &[2, 2],
            SeriesOptions::default(),
        )
        .unwrap();
    writer
        .write_pod(m, 0, &[0x0102u16, 0x0304, 0x0506, 0x0708])
        .unwrap();
    let file = writer.finish().unwrap();
    let block = &stream_blocks(&file)[0];
    assert_eq!(&block.data[..], [2, 1, 4, 3, 6, 5, 8, 7]);
}

#[test]
fn batching_follows_the_reference_rule() {
    // 8-byte samples, 20-byte target: 2 samples per block (16 <= 20, 24 > 20), the rest at
    // the end; the first block is flushed when the third sample arrives.
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let s = writer
        .add_pod_series(
            series_identifier("t", [("k", "v")]),
            PodType::Float64,
            &[],
            SeriesOptions::new().pod_block_bytes(20),
        )
        .unwrap();
    for i in 0..5 {
        writer.write_pod(s, i * 10, &[i as f64]).unwrap();
    }
    let file = writer.finish().unwrap();
    let blocks = stream_blocks(&file);
    let shape: Vec<_> = blocks
        .iter()
        .map(|b| (b.timestamp_ns, b.data.len()))
        .collect();
    assert_eq!(shape, [(0, 16), (20, 16), (40, 8)]);
    // Several samples in one call share its timestamp as their first sample's.
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let s = writer
        .add_pod_series(
            series_identifier("t", [("k", "v")]),
            PodType::Int8,
            &[2],
            SeriesOptions::default(),
        )
        .unwrap();
    writer.write_pod(s, 7, &[1i8, 2, 3, 4, 5, 6]).unwrap();
    writer.write_pod_bytes(s, 9, &[7, 8]).unwrap();
    writer.flush_pod(s).unwrap();
    writer.write_pod(s, 11, &[9i8, 10]).unwrap();
    let file = writer.finish().unwrap();
    let blocks = stream_blocks(&file);
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        (blocks[0].timestamp_ns, &blocks[0].data[..]),
        (7, &[1, 2, 3, 4, 5, 6, 7, 8][..])
    );
    assert_eq!(
        (blocks[1].timestamp_ns, &blocks[1].data[..]),
        (11, &[9, 10][..])
    );
}

/// Two series (one added between blocks of the other), additional indexes, extreme and
/// negative times, an empty and a large payload. Returns the file and the file annotations.
fn write_mixed() -> (Vec<u8>, BTreeMap<String, String>, Vec<u8>) {
    let annotations = BTreeMap::from([
        ("z:last".to_owned(), "1".to_owned()),
        ("a:first".to_owned(), "2".to_owned()),
    ]);
    let options = WriteOptions::new().annotations(annotations.clone());
    let mut writer = BddfWriter::with_options(Vec::new(), options).unwrap();
    let logs = writer
        .add_message_series(
            series_identifier("example:raw", [("example:name", "log")]),
            text(),
            SeriesOptions::new()
                .additional_index_names(["seq", "pid"])
                .description("process logs"),
        )
        .unwrap();
    let big = vec![0xabu8; 100_000];
    writer
        .write_message_indexed(logs, -1, &[0, -7], b"before the epoch")
        .unwrap();
    let late = writer
        .add_message_series(
            series_identifier("bosdyn:channel", [("bosdyn:channel", "late")]),
            MessageTypeDescriptor {
                content_type: "application/octet-stream".into(),
                type_name: "blob".into(),
                is_metadata: true,
            },
            SeriesOptions::default(),
        )
        .unwrap();
    writer.write_message(late, i64::MIN, &big).unwrap();
    writer.write_message(late, i64::MAX, b"").unwrap();
    writer
        .write_message_indexed(logs, -2_000_000_001, &[1, i64::MAX], b"x")
        .unwrap();
    (writer.finish().unwrap(), annotations, big)
}

#[test]
fn messages_with_indexes_negative_times_and_lazy_series() {
    let (file, annotations, big) = write_mixed();
    let (logs, late) = (0, 1);

    let reader = BddfReader::open(file.clone().into()).unwrap();
    assert_eq!(reader.annotations(), &annotations);
    let s = reader.series_by_index(logs).unwrap();
    assert_eq!(s.additional_index_names(), ["seq", "pid"]);
    assert_eq!(s.description(), "process logs");
    assert_eq!(s.time_span(), Some((-2_000_000_001, -1)));
    let SeriesKind::Message(m) = reader.series_by_index(late).unwrap().kind() else {
        panic!()
    };
    assert!(m.is_metadata);

    let expected = [
        (logs, -1, vec![0, -7], &b"before the epoch"[..]),
        (late, i64::MIN, vec![], &big[..]),
        (late, i64::MAX, vec![], &b""[..]),
        (logs, -2_000_000_001, vec![1, i64::MAX], &b"x"[..]),
    ];
    let check = |blocks: &[DataBlock]| {
        assert_eq!(blocks.len(), expected.len());
        for (block, (series, t, indexes, data)) in blocks.iter().zip(&expected) {
            assert_eq!(block.series_index, *series);
            assert_eq!(block.timestamp_ns, *t);
            assert_eq!(&block.additional_indexes, indexes);
            assert_eq!(&block.data[..], *data);
        }
    };
    check(&reader.blocks().collect::<Result<Vec<_>, _>>().unwrap());
    check(&stream_blocks(&file));
    let by_time: Vec<i64> = reader
        .blocks_by_time()
        .map(|b| b.unwrap().timestamp_ns)
        .collect();
    assert_eq!(by_time, [i64::MIN, -2_000_000_001, -1, i64::MAX]);
    // The logs series was written out of time order: range queries still find its blocks.
    let in_range: Vec<i64> = reader
        .series_blocks(logs, -3_000_000_000..0)
        .unwrap()
        .map(|b| b.unwrap().timestamp_ns)
        .collect();
    assert_eq!(in_range, [-1, -2_000_000_001]);
    let in_range: Vec<i64> = reader
        .series_blocks(logs, ..-1)
        .unwrap()
        .map(|b| b.unwrap().timestamp_ns)
        .collect();
    assert_eq!(in_range, [-2_000_000_001]);

    // Same calls, same bytes.
    assert!(write_mixed().0 == file);
}

#[test]
fn writer_refusals() {
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let msg = writer
        .add_message_series(
            series_identifier("type-a", [("k", "v")]),
            text(),
            SeriesOptions::new().additional_index_names(["seq"]),
        )
        .unwrap();
    // The same spec under another type is refused: readers look series up by spec.
    assert!(matches!(
        writer.add_message_series(
            series_identifier("type-b", [("k", "v")]),
            text(),
            SeriesOptions::default()
        ),
        Err(Error::DuplicateSpec { existing: 0, .. })
    ));
    let pod = writer
        .add_pod_series(
            series_identifier("t", [("k", "pod")]),
            PodType::Float32,
            &[3],
            SeriesOptions::default(),
        )
        .unwrap();
    assert!(matches!(
        writer.add_pod_series(
            series_identifier("t", [("k", "zero")]),
            PodType::Int8,
            &[0],
            SeriesOptions::default()
        ),
        Err(Error::Pod {
            source: PodError::ZeroDimension(_),
            ..
        })
    ));
    assert!(matches!(
        writer.add_pod_series(
            series_identifier("t", [("k", "none")]),
            PodType::Unspecified,
            &[],
            SeriesOptions::default()
        ),
        Err(Error::Pod {
            source: PodError::UnsupportedType(0),
            ..
        })
    ));
    assert!(matches!(
        writer.add_pod_series(
            series_identifier("t", [("k", "indexed")]),
            PodType::Int8,
            &[],
            SeriesOptions::new().additional_index_names(["seq"]),
        ),
        Err(Error::Pod {
            source: PodError::AdditionalIndexes,
            ..
        })
    ));
    assert!(matches!(
        writer.write_message(msg, 0, b"no index"),
        Err(Error::AdditionalIndexCount {
            expected: 1,
            found: 0,
            ..
        })
    ));
    assert!(matches!(
        writer.write_message(pod, 0, b"x"),
        Err(Error::WrongSeriesKind {
            expected: "message",
            ..
        })
    ));
    assert!(matches!(
        writer.write_pod(msg, 0, &[1.0f32]),
        Err(Error::WrongSeriesKind {
            expected: "POD",
            ..
        })
    ));
    assert!(matches!(
        writer.write_pod(pod, 0, &[1.0f64, 2.0, 3.0]),
        Err(Error::Pod {
            source: PodError::TypeMismatch {
                expected: PodType::Float32,
                found: PodType::Float64
            },
            ..
        })
    ));
    assert!(matches!(
        writer.write_pod(pod, 0, &[1.0f32, 2.0]),
        Err(Error::Pod {
            source: PodError::PartialValues {
                values: 2,
                values_per_sample: 3
            },
            ..
        })
    ));
    assert!(matches!(
        writer.write_pod_bytes(pod, 0, &[0; 13]),
        Err(Error::Pod {
            source: PodError::PartialSample {
                len: 13,
                bytes_per_sample: 12
            },
            ..
        })
    ));
    assert!(matches!(
        writer.write_message(9, 0, b""),
        Err(Error::NoSuchSeries(9))
    ));
    // Refused calls leave no trace: the file holds exactly the two series.
    let file = writer.finish().unwrap();
    let reader = BddfReader::open(file.into()).unwrap();
    assert_eq!(reader.series().len(), 2);
    assert_eq!(reader.blocks().count(), 0);
}

#[test]
fn files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bddf");
    let mut writer = BddfWriter::create(&path, WriteOptions::default()).unwrap();
    let s = writer
        .add_message_series(
            series_identifier("t", [("k", "v")]),
            text(),
            SeriesOptions::default(),
        )
        .unwrap();
    for i in 0..100 {
        writer
            .write_message(s, i, format!("message {i}").as_bytes())
            .unwrap();
    }
    assert!(!path.exists(), "nothing under the final name before commit");
    writer
        .finish()
        .unwrap()
        .into_inner()
        .map_err(|e| e.into_error())
        .unwrap()
        .commit()
        .unwrap();
    let reader = BddfReader::from_file(&path).unwrap();
    assert_eq!(reader.series()[0].block_count(), 100);

    // Cut it inside the last message and recover it to another file.
    let bytes = std::fs::read(&path).unwrap();
    let last = reader.block_entries(s).unwrap()[99].offset as usize;
    let cut = dir.path().join("cut.bddf");
    std::fs::write(&cut, &bytes[..last + 20]).unwrap();
    let rescued = dir.path().join("rescued.bddf");
    let report = recover_file(&cut, &rescued).unwrap();
    assert_eq!(
        (report.data_blocks_recovered, report.data_blocks_lost),
        (99, 1)
    );
    let reader = BddfReader::from_file(&rescued).unwrap();
    assert_eq!(reader.series()[0].block_count(), 99);
    reader.verify_checksum().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_messages_round_trip(
        messages in proptest::collection::vec(
            (0u32..3, any::<i64>(), proptest::collection::vec(any::<u8>(), 0..300)),
            0..40,
        )
    ) {
        let mut writer = BddfWriter::new(Vec::new()).unwrap();
        for name in ["a", "b", "c"] {
            writer
                .add_message_series(series_identifier("t", [("k", name)]), text(), SeriesOptions::default())
                .unwrap();
        }
        for (series, t, data) in &messages {
            writer.write_message(*series, *t, data).unwrap();
        }
        let file = writer.finish().unwrap();
        let reader = BddfReader::open(file.clone().into()).unwrap();
        let indexed: Vec<DataBlock> = reader.blocks().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&indexed, &stream_blocks(&file));
        prop_assert_eq!(indexed.len(), messages.len());
        for (block, (series, t, data)) in indexed.iter().zip(&messages) {
            prop_assert_eq!(block.series_index, *series);
            prop_assert_eq!(block.timestamp_ns, *t);
            prop_assert_eq!(&block.data[..], &data[..]);
        }
        let mut times: Vec<i64> = messages.iter().map(|m| m.1).collect();
        times.sort_unstable();
        let by_time: Vec<i64> = reader.blocks_by_time().map(|b| b.unwrap().timestamp_ns).collect();
        prop_assert_eq!(by_time, times);
        for series in 0..3u32 {
            let count = messages.iter().filter(|m| m.0 == series).count();
            prop_assert_eq!(reader.series_by_index(series).unwrap().block_count(), count as u64);
            for (position, (_, t, data)) in messages.iter().filter(|m| m.0 == series).enumerate() {
                let block = reader.read_block(series, position).unwrap();
                prop_assert_eq!(block.timestamp_ns, *t);
                prop_assert_eq!(&block.data[..], &data[..]);
            }
        }
    }
}
