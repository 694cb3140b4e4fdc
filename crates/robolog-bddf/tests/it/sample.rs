//! `testdata/bddf/sample.bddf`, written by the reference writer: every value below is what the
//! reference readers printed for it (`testdata/bddf/sample.txt`).

use std::collections::BTreeMap;

use robolog_bddf::proto::PodType;
use robolog_bddf::{
    BddfReader, BddfWriter, DataBlock, Error, IndexSource, PodValues, SeriesKind, SeriesOptions,
    StreamReader, WriteOptions, identifier_hash,
};
use robolog_testkit::testdata;

const T0: i64 = 1_700_000_000_000_000_000;
const MS: i64 = 1_000_000;

struct ExpectedSeries {
    series_type: &'static str,
    spec: &'static [(&'static str, &'static str)],
    hash: u64,
    /// (content type, type name) for message series, element type and dimensions for POD.
    kind: Kind,
    annotations: &'static [(&'static str, &'static str)],
    index_names: &'static [&'static str],
    descriptor_offset: u64,
    block_index_offset: u64,
    total_bytes: u64,
    /// (file offset, timestamp, additional indexes, payload length)
    blocks: &'static [(u64, i64, &'static [i64], usize)],
}

enum Kind {
    Message(&'static str, &'static str),
    Pod(PodType, &'static [u32]),
}

const SERIES: &[ExpectedSeries] = &[
    ExpectedSeries {
        series_type: "bosdyn:channel",
        spec: &[("bosdyn:channel", "robot-id-requests")],
        hash: 0xdd5a_3630_dc08_1c2c,
        kind: Kind::Message("application/protobuf", "bosdyn.api.RobotIdRequest"),
        annotations: &[("example:note", "robot id requests")],
        index_names: &[],
        descriptor_offset: 98,
        block_index_offset: 1611,
        total_bytes: 70,
        blocks: &[
            (636, T0, &[], 20),
            (751, T0 + 100 * MS, &[], 25),
            (882, T0 + 200 * MS, &[], 25),
        ],
    },
    ExpectedSeries {
        series_type: "bosdyn:channel",
        spec: &[("example:var", "battery.voltage")],
        hash: 0x205c_875a_f744_ed8f,
        kind: Kind::Pod(PodType::Float64, &[]),
        annotations: &[("units", "V")],
        index_names: &[],
        descriptor_offset: 261,
        block_index_offset: 1674,
        total_bytes: 40,
        blocks: &[(1518, T0, &[], 40)],
    },
    ExpectedSeries {
        series_type: "bosdyn:channel",
        spec: &[("example:var", "motor.count")],
        hash: 0xb3cb_3c8b_b234_6376,
        kind: Kind::Pod(PodType::Int32, &[]),
        annotations: &[("units", "1")],
        index_names: &[],
        descriptor_offset: 349,
        block_index_offset: 1704,
        total_bytes: 20,
        blocks: &[(1013, T0, &[], 16), (1580, T0 + 40 * MS, &[], 4)],
    },
    ExpectedSeries {
        series_type: "example:raw",
        spec: &[("example:name", "text-log")],
        hash: 0x752b_1482_4e58_0c12,
        kind: Kind::Message("text/plain", "utf8-text"),
        annotations: &[("example:k", "v")],
        index_names: &["seq", "pid"],
        descriptor_offset: 434,
        block_index_offset: 1752,
        total_bytes: 30,
        blocks: &[
            (676, T0 + 1, &[0, 4242], 10),
            (801, T0 + 100 * MS + 1, &[1, 4242], 10),
            (932, T0 + 200 * MS + 1, &[2, 4242], 10),
        ],
    },
    ExpectedSeries {
        series_type: "bosdyn:signal",
        spec: &[("example:var", "accel.xyz")],
        hash: 0xcba9_d700_a67c_144b,
        kind: Kind::Pod(PodType::Float32, &[3]),
        annotations: &[("units", "m/s2")],
        index_names: &[],
        descriptor_offset: 548,
        block_index_offset: 1835,
        total_bytes: 36,
        blocks: &[
            (715, T0 + 2, &[], 12),
            (843, T0 + 100 * MS + 2, &[], 12),
            (974, T0 + 200 * MS + 2, &[], 12),
        ],
    },
    ExpectedSeries {
        series_type: "bosdyn:grpc:requests",
        spec: &[
            ("bosdyn:grpc:service", "robot-id"),
            ("bosdyn:message-type", "bosdyn.api.RobotIdRequest"),
        ],
        hash: 0xdbc0_ce51_0498_2317,
        kind: Kind::Message("application/protobuf", "bosdyn.api.RobotIdRequest"),
        annotations: &[],
        index_names: &[],
        descriptor_offset: 1051,
        block_index_offset: 1903,
        total_bytes: 15,
        blocks: &[(1233, T0 + 5 * MS, &[], 15)],
    },
    ExpectedSeries {
        series_type: "bosdyn:grpc:responses",
        spec: &[
            ("bosdyn:grpc:service", "robot-id"),
            ("bosdyn:message-type", "bosdyn.api.RobotIdResponse"),
        ],
        hash: 0xaa70_0f79_2059_078b,
        kind: Kind::Message("application/protobuf", "bosdyn.api.RobotIdResponse"),
        annotations: &[],
        index_names: &[],
        descriptor_offset: 1275,
        block_index_offset: 1938,
        total_bytes: 31,
        blocks: &[(1460, T0 + 6 * MS, &[], 31)],
    },
];

/// The data blocks in file order, as the reference streaming reader listed them
/// (offset, series).
const FILE_ORDER: &[(u64, u32)] = &[
    (636, 0),
    (676, 3),
    (715, 4),
    (751, 0),
    (801, 3),
    (843, 4),
    (882, 0),
    (932, 3),
    (974, 4),
    (1013, 2),
    (1233, 5),
    (1460, 6),
    (1518, 1),
    (1580, 2),
];

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn sample() -> Vec<u8> {
    testdata::read("bddf/sample.bddf")
}

fn expected_block(offset: u64) -> (u32, i64, &'static [i64], usize) {
    for (index, series) in SERIES.iter().enumerate() {
        for &(o, t, indexes, len) in series.blocks {
            if o == offset {
                return (index as u32, t, indexes, len);
            }
        }
    }
    panic!("no block at {offset}")
}

fn check_block(block: &DataBlock) {
    let (series, t, indexes, len) = expected_block(block.offset);
    assert_eq!(
        block.series_index, series,
        "series of block {}",
        block.offset
    );
    assert_eq!(block.timestamp_ns, t, "time of block {}", block.offset);
    assert_eq!(block.additional_indexes, indexes);
    assert_eq!(block.data.len(), len);
}

#[test]
fn indexed_reader_lists_every_series_as_the_reference_does() {
    let reader = BddfReader::open(sample().into()).unwrap();
    assert!(matches!(reader.index_source(), IndexSource::File));
    let fd = reader.file_descriptor();
    let version = fd.version.unwrap();
    assert_eq!(
        (
            version.major_version,
            version.minor_version,
            version.patch_level
        ),
        (1, 0, 0)
    );
    assert_eq!((fd.checksum_type, fd.checksum_num_bytes), (2, 20));
    assert_eq!(
        reader.annotations(),
        &map(&[
            ("bosdyn:robot-serial-number", "spot-BD-0001"),
            ("example:purpose", "bddf sample"),
        ])
    );
    assert_eq!(reader.trailer().unwrap().index_offset, 1973);
    assert_eq!(reader.series().len(), SERIES.len());
    for (index, (series, expected)) in reader.series().iter().zip(SERIES).enumerate() {
        assert_eq!(series.index(), index as u32);
        assert_eq!(series.series_type(), expected.series_type);
        assert_eq!(series.spec(), &map(expected.spec));
        assert_eq!(series.identifier_hash(), expected.hash);
        assert_eq!(identifier_hash(series.identifier()), expected.hash);
        match (series.kind(), &expected.kind) {
            (SeriesKind::Message(m), Kind::Message(content_type, type_name)) => {
                assert_eq!(&m.content_type, content_type);
                assert_eq!(&m.type_name, type_name);
            }
            (SeriesKind::Pod(p), Kind::Pod(pod_type, dimensions)) => {
                assert_eq!(p.pod_type(), *pod_type);
                assert_eq!(&p.dimension, dimensions);
            }
            (other, _) => panic!("series {index}: unexpected kind {other:?}"),
        }
        assert_eq!(series.annotations(), &map(expected.annotations));
        assert_eq!(series.additional_index_names(), expected.index_names);
        assert_eq!(series.descriptor_offset(), expected.descriptor_offset);
        assert_eq!(
            series.block_index_offset(),
            Some(expected.block_index_offset)
        );
        assert_eq!(series.stats().total_bytes, expected.total_bytes);
        assert_eq!(series.block_count(), expected.blocks.len() as u64);
        let first = expected.blocks.iter().map(|b| b.1).min();
        let last = expected.blocks.iter().map(|b| b.1).max();
        assert_eq!(series.time_span(), first.zip(last));
        let entries = reader.block_entries(index as u32).unwrap();
        for (position, (entry, &(offset, t, indexes, _))) in
            entries.iter().zip(expected.blocks).enumerate()
        {
            assert_eq!((entry.offset, entry.timestamp_ns), (offset, t));
            assert_eq!(entry.additional_indexes, indexes);
            let block = reader.read_block(index as u32, position).unwrap();
            assert_eq!(block.offset, offset);
            check_block(&block);
        }
    }
}

#[test]
fn payloads_and_pod_values() {
    let reader = BddfReader::open(sample().into()).unwrap();
    // Protobuf payloads: RobotIdRequest headers carry the client names.
    for (position, name) in ["client-0", "client-1", "client-2"].iter().enumerate() {
        let block = reader.read_block(0, position).unwrap();
        assert!(
            block.data.windows(name.len()).any(|w| w == name.as_bytes()),
            "{name} in {:?}",
            block.data
        );
    }
    let response = reader.read_block(6, 0).unwrap();
    assert!(response.data.windows(12).any(|w| w == b"spot-BD-0001"));
    for (position, line) in ["log line 0", "log line 1", "log line 2"]
        .iter()
        .enumerate()
    {
        assert_eq!(
            &reader.read_block(3, position).unwrap().data[..],
            line.as_bytes()
        );
    }

    let pod = |series: u32, position: usize| {
        let block = reader.read_block(series, position).unwrap();
        reader
            .series_by_index(series)
            .unwrap()
            .decode_pod(&block)
            .unwrap()
    };
    let voltage = pod(1, 0);
    assert_eq!(
        voltage.values,
        PodValues::Float64(vec![12.0, 12.25, 12.5, 12.75, 13.0])
    );
    assert_eq!(voltage.sample_count(), 5);
    assert_eq!(
        pod(2, 0).values,
        PodValues::Int32(vec![-100, -99, -98, -97])
    );
    assert_eq!(pod(2, 1).values, PodValues::Int32(vec![-96]));
    // The reference POD reader fails on this vector series; the values are what was written.
    for (position, sample) in [[0.0, 0.5, 0.0], [1.0, 1.5, -1.0], [2.0, 2.5, -2.0]]
        .iter()
        .enumerate()
    {
        let samples = pod(4, position);
        assert_eq!(samples.dimensions, [3]);
        assert_eq!(samples.sample_count(), 1);
        assert_eq!(samples.sample::<f32>(0), Some(&sample[..]));
    }
    // Message series are not POD.
    let block = reader.read_block(0, 0).unwrap();
    assert!(matches!(
        reader.series()[0].decode_pod(&block),
        Err(Error::WrongSeriesKind {
            series_index: 0,
            ..
        })
    ));
}

#[test]
fn whole_file_in_file_order_and_time_order() {
    let reader = BddfReader::open(sample().into()).unwrap();
    let blocks: Vec<_> = reader.blocks().collect::<Result<_, _>>().unwrap();
    let order: Vec<_> = blocks.iter().map(|b| (b.offset, b.series_index)).collect();
    assert_eq!(order, FILE_ORDER);
    blocks.iter().for_each(check_block);

    let by_time: Vec<_> = reader.blocks_by_time().map(|b| b.unwrap().offset).collect();
    assert_eq!(
        by_time,
        [
            636, 1013, 1518, 676, 715, 1233, 1460, 1580, 751, 801, 843, 882, 932, 974
        ]
    );
    reader.verify_checksum().unwrap();
}

#[test]
fn series_blocks_by_time_range() {
    let reader = BddfReader::open(sample().into()).unwrap();
    let offsets = |series: u32, range: std::ops::Range<i64>| -> Vec<u64> {
        reader
            .series_blocks(series, range)
            .unwrap()
            .map(|b| b.unwrap().offset)
            .collect()
    };
    assert_eq!(offsets(0, T0..T0 + 1), [636]);
    assert_eq!(offsets(0, T0 + 1..T0 + 200 * MS), [751]);
    assert_eq!(offsets(0, T0 + 1..T0 + 200 * MS + 1), [751, 882]);
    assert_eq!(offsets(3, 0..i64::MAX), [676, 801, 932]);
    assert_eq!(offsets(2, T0 + 30 * MS..T0 + 50 * MS), [1580]);
    assert!(offsets(6, 0..T0).is_empty());
    let inclusive: Vec<_> = reader
        .series_blocks(4, T0 + 2..=T0 + 100 * MS + 2)
        .unwrap()
        .map(|b| b.unwrap().offset)
        .collect();
    assert_eq!(inclusive, [715, 843]);
    assert!(matches!(
        reader.series_blocks(7, ..),
        Err(Error::NoSuchSeries(7))
    ));
    assert!(matches!(
        reader.read_block(0, 3),
        Err(Error::NoSuchBlock {
            series_index: 0,
            position: 3,
            block_count: 3
        })
    ));
}

#[test]
fn stream_reader_sees_what_the_reference_stream_reader_saw() {
    let data = sample();
    let mut reader = StreamReader::new(&data[..]).unwrap();
    assert_eq!(reader.annotations()["example:purpose"], "bddf sample");
    let mut order = Vec::new();
    while let Some(block) = reader.next_block().unwrap() {
        check_block(&block);
        // Each block's series was declared before it.
        assert!(reader.series_by_index(block.series_index).is_some());
        order.push((block.offset, block.series_index));
    }
    assert_eq!(order, FILE_ORDER);
    let trailer = reader.trailer().unwrap();
    assert_eq!(trailer.offset, 2521);
    assert_eq!(trailer.index_offset, 1973);
    assert_eq!(
        trailer.digest.to_string(),
        "f5a0f012db95a93137bde3f0fa73991a9156ae31"
    );
    let offsets: Vec<_> = reader.series().map(|s| s.descriptor_offset()).collect();
    assert_eq!(offsets, [98, 261, 349, 434, 548, 1051, 1275]);
    for (series, expected) in reader.series().zip(SERIES) {
        assert_eq!(series.block_count(), expected.blocks.len() as u64);
        assert_eq!(series.stats().total_bytes, expected.total_bytes);
    }
}

/// Replays the calls `make_bddf.py` made on the reference writer, with the same inputs (the
/// protobuf payloads are taken from the file): same layout, same index, same bytes.
#[test]
fn writer_replays_the_reference_sample_with_its_layout() {
    let original = sample();
    let reader = BddfReader::open(original.clone().into()).unwrap();
    let payload = |series: u32, position: usize| reader.read_block(series, position).unwrap().data;
    let series_options = |index: usize| {
        SeriesOptions::new()
            .annotations(map(SERIES[index].annotations))
            .additional_index_names(SERIES[index].index_names.iter().copied())
    };
    let descriptor = |index: usize| reader.series()[index].descriptor().clone();
    let identifier = |index: usize| descriptor(index).series_identifier.unwrap();
    let message_type = |index: usize| match reader.series()[index].kind() {
        SeriesKind::Message(m) => m.clone(),
        _ => panic!(),
    };

    let options = WriteOptions::new().annotations(reader.annotations().clone());
    let mut w = BddfWriter::with_options(Vec::new(), options).unwrap();
    let requests = w
        .add_message_series(identifier(0), message_type(0), series_options(0))
        .unwrap();
    let voltage = w
        .add_pod_series(identifier(1), PodType::Float64, &[], series_options(1))
        .unwrap();
    let count = w
        .add_pod_series(
            identifier(2),
            PodType::Int32,
            &[],
            series_options(2).pod_block_bytes(16),
        )
        .unwrap();
    let raw = w
        .add_message_series(identifier(3), message_type(3), series_options(3))
        .unwrap();
    let accel = w
        .add_pod_series(identifier(4), PodType::Float32, &[3], series_options(4))
        .unwrap();
    for i in 0..3 {
        let t = T0 + i * 100 * MS;
        w.write_message(requests, t, &payload(0, i as usize))
            .unwrap();
        w.write_message_indexed(raw, t + 1, &[i, 4242], format!("log line {i}").as_bytes())
            .unwrap();
        // `-i` is an integer in the script: 0, not -0.0.
        let (x, minus_x) = (i as f32, (-i) as f32);
        // The reference wrote these through its low-level API: one block per sample.
        w.write_pod(accel, t + 2, &[x, x + 0.5, minus_x]).unwrap();
        w.flush_pod(accel).unwrap();
    }
    for i in 0..5 {
        w.write_pod(voltage, T0 + i * 10 * MS, &[12.0 + i as f64 * 0.25])
            .unwrap();
        w.write_pod(count, T0 + i * 10 * MS, &[-100 + i as i32])
            .unwrap();
    }
    let grpc_request = w
        .add_message_series(identifier(5), message_type(5), series_options(5))
        .unwrap();
    w.write_message(grpc_request, T0 + 5 * MS, &payload(5, 0))
        .unwrap();
    let grpc_response = w
        .add_message_series(identifier(6), message_type(6), series_options(6))
        .unwrap();
    w.write_message(grpc_response, T0 + 6 * MS, &payload(6, 0))
        .unwrap();
    let ours = w.finish().unwrap();

    assert_eq!(ours.len(), original.len());
    let replay = BddfReader::open(ours.clone().into()).unwrap();
    replay.verify_checksum().unwrap();
    assert_eq!(replay.trailer().unwrap().index_offset, 1973);
    for (a, b) in replay.series().iter().zip(reader.series()) {
        assert_eq!(a.descriptor(), b.descriptor());
        assert_eq!(a.descriptor_offset(), b.descriptor_offset());
        assert_eq!(a.block_index_offset(), b.block_index_offset());
        assert_eq!(a.stats(), b.stats());
        let index = a.index();
        assert_eq!(
            replay.block_entries(index).unwrap(),
            reader.block_entries(index).unwrap()
        );
    }
    // The reference writes maps of two or more entries in a random order; in this copy of its
    // output they happen to be sorted, as ours always are, so the files are identical.
    assert!(
        ours == original,
        "the replay differs from the reference output"
    );
}
