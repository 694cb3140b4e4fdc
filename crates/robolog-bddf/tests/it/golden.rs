//! The deterministic files of the format reference (`specs/bddf.md` section 14): our writer
//! must produce them byte for byte, and our readers must read them and the reference writer's
//! empty-file quirk.

use std::collections::BTreeMap;

use robolog_bddf::proto::MessageTypeDescriptor;
use robolog_bddf::{
    BddfReader, BddfWriter, IndexSource, ReadOptions, SeriesKind, StreamReader, WriteOptions,
    series_identifier,
};
use robolog_testkit::testdata;

/// Section 14 of the spec, verbatim.
const GOLDEN_HEX: &str = "\
4244444614000000000000010a120a02080112080a03613a62120163180220144500000000000001\
124312250a0e626f7364796e3a6368616e6e656c12130a0e626f7364796e3a6368616e6e656c1201\
781884f0a6feb5e9fdf38301220f0a0a746578742f706c61696e1201740f000000000000000a0000\
00120808011080cab5ee0168656c6c6f14000000000000011a1210201a0c0a0808011080cab5ee01\
106d2005390000000000000122370a250a0e626f7364796e3a6368616e6e656c12130a0e626f7364\
796e3a6368616e6e656c120178120288011a0a84f0a6feb5e9fdf383011800000000000002a40000\
000000000026b8bea9b8c97605f01ccb7598622acdad3b0f0d46444442";

/// The empty-FileIndex variant of section 14 (our writer's output for a file without series).
const EMPTY_INDEX_HEX: &str = "\
4244444614000000000000010a120a02080112080a03613a62120163180220140200000000000001\
220018000000000000022000000000000000d7616b1884aa5370be91b27b5be6efb741f2d63b46444442";

/// What the reference writer produces for a file without series (from testdata/bddf/sample.txt,
/// "empty file bytes"): its file index is a 0-byte descriptor block.
const REFERENCE_EMPTY_HEX: &str = "\
424444460a000000000000010a080a02080118022014000000000000000118000000000000021600000000000000\
c6806d377ad362cc77814d87ec87b99422493e6046444442";

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn golden_annotations() -> WriteOptions {
    WriteOptions::new().annotations(BTreeMap::from([("a:b".to_owned(), "c".to_owned())]))
}

fn write_golden() -> Vec<u8> {
    let mut writer = BddfWriter::with_options(Vec::new(), golden_annotations()).unwrap();
    let series = writer
        .add_message_series(
            series_identifier("bosdyn:channel", [("bosdyn:channel", "x")]),
            MessageTypeDescriptor {
                content_type: "text/plain".into(),
                type_name: "t".into(),
                is_metadata: false,
            },
            Default::default(),
        )
        .unwrap();
    writer
        .write_message(series, 1_500_000_000, b"hello")
        .unwrap();
    writer.finish().unwrap()
}

#[test]
fn test_file_is_the_spec_hex() {
    let golden = unhex(GOLDEN_HEX);
    assert_eq!(golden.len(), 269);
    assert_eq!(testdata::read("bddf/golden_one_msg.bddf"), golden);
}

#[test]
fn writer_produces_the_golden_file_byte_for_byte() {
    assert_eq!(write_golden(), unhex(GOLDEN_HEX));
}

#[test]
fn writer_without_series_produces_the_empty_index_variant() {
    let file = BddfWriter::with_options(Vec::new(), golden_annotations())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(file.len(), 82);
    assert_eq!(file, unhex(EMPTY_INDEX_HEX));
}

#[test]
fn indexed_reader_reads_the_golden_file() {
    let reader = BddfReader::open(unhex(GOLDEN_HEX).into()).unwrap();
    assert!(matches!(reader.index_source(), IndexSource::File));
    assert_eq!(reader.annotations()["a:b"], "c");
    assert_eq!(reader.trailer().unwrap().index_offset, 164);
    let [series] = reader.series() else {
        panic!("one series expected")
    };
    assert_eq!(series.index(), 0);
    assert_eq!(series.series_type(), "bosdyn:channel");
    assert_eq!(series.spec()["bosdyn:channel"], "x");
    assert_eq!(series.identifier_hash(), 0x83e7_f74b_5fc9_b804);
    let SeriesKind::Message(message) = series.kind() else {
        panic!("message series expected")
    };
    assert_eq!(
        (message.content_type.as_str(), message.type_name.as_str()),
        ("text/plain", "t")
    );
    assert_eq!(series.descriptor_offset(), 32);
    assert_eq!(series.block_index_offset(), Some(136));
    assert_eq!(series.block_count(), 1);
    assert_eq!(series.stats().total_bytes, 5);
    assert_eq!(series.time_span(), Some((1_500_000_000, 1_500_000_000)));
    let blocks: Vec<_> = reader.blocks().collect::<Result<_, _>>().unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].offset, 109);
    assert_eq!(blocks[0].timestamp_ns, 1_500_000_000);
    assert_eq!(&blocks[0].data[..], b"hello");
    reader.verify_checksum().unwrap();
}

#[test]
fn stream_reader_reads_the_golden_file() {
    let golden = unhex(GOLDEN_HEX);
    let mut reader = StreamReader::new(&golden[..]).unwrap();
    let block = reader.next_block().unwrap().unwrap();
    assert_eq!(
        (block.series_index, block.timestamp_ns, &block.data[..]),
        (0, 1_500_000_000, &b"hello"[..])
    );
    assert!(reader.next_block().unwrap().is_none());
    let trailer = reader.trailer().unwrap();
    assert_eq!(trailer.index_offset, 164);
    assert_eq!(
        trailer.digest.to_string(),
        "26b8bea9b8c97605f01ccb7598622acdad3b0f0d"
    );
    assert_eq!(reader.series_by_index(0).unwrap().block_count(), 1);
}

#[test]
fn empty_files_of_both_kinds_read_as_no_series() {
    for hex in [EMPTY_INDEX_HEX, REFERENCE_EMPTY_HEX] {
        let file = unhex(hex);
        let strict = ReadOptions::new().strict(true);
        let reader = BddfReader::open_with(file.clone().into(), strict).unwrap();
        assert!(reader.series().is_empty());
        assert_eq!(reader.blocks().count(), 0);
        reader.verify_checksum().unwrap();
        let mut stream = StreamReader::new(&file[..]).unwrap();
        assert!(stream.next_block().unwrap().is_none());
        assert!(stream.trailer().is_some());
    }
}
