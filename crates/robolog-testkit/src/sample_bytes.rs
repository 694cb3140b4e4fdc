//! Deterministic bytes for codec tests: the same on every run and machine, no files needed.

/// The xorshift64 sequence from `seed`.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Text-like bytes that compress somewhat: a repeated word with a pseudo-random byte at every
/// seventh position.
pub fn compressible(len: usize) -> Vec<u8> {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    (0..len)
        .map(|i| {
            let noise = next();
            if i % 7 == 0 {
                (noise & 0xFF) as u8
            } else {
                b"robolog "[i % 8]
            }
        })
        .collect()
}

/// Pseudo-random bytes that do not compress.
pub fn incompressible(len: usize) -> Vec<u8> {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    (0..len).map(|_| (next() >> 24) as u8).collect()
}
