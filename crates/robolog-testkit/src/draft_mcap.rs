//! An MCAP file in the pre-ratification draft layout, made by hand for the tests of the readers
//! that must recognise it.

/// A minimal unchunked file in the pre-ratification draft layout (the project spec mcap.md,
/// section 13): Header, one Channel Info (std_msgs/String), two Messages, the Channel Info again
/// in the index section, Footer (index_offset, index_crc 0 = unchecked).
pub fn minimal() -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    fn record(out: &mut Vec<u8>, opcode: u8, content: &[u8]) {
        out.push(opcode);
        out.extend_from_slice(&(content.len() as u64).to_le_bytes());
        out.extend_from_slice(content);
    }
    let magic = b"\x89MCAP0\r\n";
    let mut out = magic.to_vec();
    let mut header = Vec::new();
    string(&mut header, "ros1");
    string(&mut header, "old-writer");
    header.extend_from_slice(&0u32.to_le_bytes());
    record(&mut out, 0x01, &header);
    let mut info = Vec::new();
    info.extend_from_slice(&7u16.to_le_bytes());
    string(&mut info, "/chatter");
    string(&mut info, "ros1");
    string(&mut info, "std_msgs/String");
    string(&mut info, "string data\n");
    info.extend_from_slice(&0u32.to_le_bytes());
    record(&mut out, 0x03, &info);
    for (seq, (t, text)) in [(100u64, "one"), (200, "two")].into_iter().enumerate() {
        let mut m = Vec::new();
        m.extend_from_slice(&7u16.to_le_bytes());
        m.extend_from_slice(&(seq as u32).to_le_bytes());
        m.extend_from_slice(&(t - 1).to_le_bytes()); // publish_time
        m.extend_from_slice(&t.to_le_bytes()); // record_time
        string(&mut m, text);
        record(&mut out, 0x04, &m);
    }
    let index_offset = out.len() as u64;
    record(&mut out, 0x03, &info);
    let mut footer = index_offset.to_le_bytes().to_vec();
    footer.extend_from_slice(&0u32.to_le_bytes());
    record(&mut out, 0x02, &footer);
    out.extend_from_slice(magic);
    out
}
