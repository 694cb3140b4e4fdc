//! AtomicFile, CountingWriter, read_file and bounded stream reads.

use std::io::{Read, Write};

use robolog_framing::{
    AtomicFile, CountingWriter, ErrorKind, StreamError, crc32, read_exact_bounded, read_file,
};

#[test]
fn atomic_file_leaves_the_destination_alone_until_commit() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.bag");
    std::fs::write(&target, b"precious").unwrap();
    {
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"half-written").unwrap();
        assert!(f.temp_path().exists());
        // Dropped without commit: an error happened.
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary file removed"
    );

    let mut f = AtomicFile::create(&target).unwrap();
    f.write_all(b"new content").unwrap();
    let temp = f.temp_path().to_path_buf();
    f.commit().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"new content");
    assert!(!temp.exists());
}

#[test]
fn atomic_file_in_the_current_directory_and_seek() {
    use std::io::{Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x.mcap");
    let mut f = AtomicFile::create(&target).unwrap();
    f.write_all(b"0000rest").unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(b"head").unwrap();
    f.commit().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"headrest");
    assert!(AtomicFile::create(dir.path().join("missing-dir/x")).is_err());
}

#[test]
fn counting_writer_tracks_position_and_crc() {
    let mut w = CountingWriter::starting_at(Vec::new(), 100);
    w.write_all(b"abc").unwrap();
    assert_eq!((w.position(), w.crc()), (103, None));
    w.reset_crc();
    w.write_all(b"defgh").unwrap();
    assert_eq!(w.position(), 108);
    assert_eq!(w.crc(), Some(crc32(b"defgh")));
    assert_eq!(w.into_inner(), b"abcdefgh");
}

#[test]
fn read_file_reads_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"hello").unwrap();
    assert_eq!(&read_file(&path).unwrap()[..], b"hello");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert!(read_file(&empty).unwrap().is_empty());
    assert!(read_file(dir.path().join("missing")).is_err());
}

/// A reader that claims nothing about its length and yields 10 bytes.
struct Short(std::io::Cursor<Vec<u8>>);
impl Read for Short {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

#[test]
fn bounded_read_does_not_trust_the_length() {
    let mut input = Short(std::io::Cursor::new(vec![7; 10]));
    let mut buf = Vec::new();
    // Under the limit but far more than the stream has: error, and no giant allocation.
    let err = read_exact_bounded(&mut input, 3 << 30, 4 << 30, 50, "chunk", &mut buf).unwrap_err();
    match err {
        StreamError::Framing(e) => {
            assert_eq!(e.offset, 50);
            assert_eq!(
                e.kind,
                ErrorKind::UnexpectedEnd {
                    needed: 3 << 30,
                    available: 10
                }
            );
        }
        other => panic!("{other}"),
    }
    assert!(buf.capacity() <= 2 << 20, "capacity {}", buf.capacity());
    let err = read_exact_bounded(&mut input, 5 << 30, 4 << 30, 0, "chunk", &mut buf).unwrap_err();
    assert!(
        matches!(err, StreamError::Framing(e) if matches!(e.kind, ErrorKind::LengthOverLimit { .. }))
    );
}
