//! Lists the chunks of a ROS bag 2.0 file with their compression and sizes, decompressing each
//! one: a tour of `ByteReader` and `Decompressor` on a real container.
//!
//! ```text
//! cargo run -p robolog-framing --example bag_chunks -- testdata/bags/generated/ros_comm/ref_lz4.bag
//! ```

#![allow(clippy::print_stdout)]

use std::error::Error;

use robolog_framing::{ByteReader, Compression, Decompressor, read_file};

/// The fields of a bag record header we need: op, compression, size.
fn header_fields(header: &[u8], base: u64) -> Result<(u8, String, u32), Box<dyn Error>> {
    let mut fields = ByteReader::with_base(header, base);
    let (mut op, mut compression, mut size) = (0, String::new(), 0);
    while !fields.is_empty() {
        let field = fields.read_bytes_u32("header field")?;
        let eq = field
            .iter()
            .position(|&b| b == b'=')
            .ok_or("header field without '='")?;
        let value = &field[eq + 1..];
        match &field[..eq] {
            b"op" => op = *value.first().ok_or("empty op")?,
            b"compression" => compression = String::from_utf8_lossy(value).into_owned(),
            b"size" => size = ByteReader::new(value).read_u32("size")?,
            _ => {}
        }
    }
    Ok((op, compression, size))
}

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: bag_chunks FILE.bag")?;
    let bag = read_file(&path)?;
    let mut r = ByteReader::new(&bag);
    if r.read_bytes(13, "version line")? != b"#ROSBAG V2.0\n" {
        return Err("not a ROS bag 2.0 file".into());
    }
    let mut decompressor = Decompressor::new();
    let mut chunk = Vec::new();
    let (mut total_in, mut total_out) = (0u64, 0u64);
    println!(
        "{:>10}  {:<6} {:>12} {:>12} {:>7}",
        "offset", "codec", "stored", "unpacked", "ratio"
    );
    while !r.is_empty() {
        let offset = r.offset();
        let header_at = r.offset() + 4;
        let header = r.read_bytes_u32("record header")?;
        let data = r.read_bytes_u32("record data")?;
        let (op, compression, size) = header_fields(header, header_at)?;
        if op != 0x05 {
            continue;
        }
        let codec = match compression.as_str() {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            "bz2" => Compression::Bz2,
            other => return Err(format!("unknown chunk compression {other:?}").into()),
        };
        decompressor.decompress(codec, data, size as usize, 1 << 32, &mut chunk)?;
        total_in += data.len() as u64;
        total_out += chunk.len() as u64;
        println!(
            "{offset:>10}  {:<6} {:>12} {:>12} {:>6.2}x",
            codec.name(),
            data.len(),
            chunk.len(),
            chunk.len() as f64 / data.len().max(1) as f64
        );
    }
    println!(
        "total: {total_in} bytes stored, {total_out} unpacked ({:.2}x)",
        total_out as f64 / total_in.max(1) as f64
    );
    Ok(())
}
