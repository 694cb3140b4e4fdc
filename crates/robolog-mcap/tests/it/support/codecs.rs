//! The chunk codecs a test can write and read in this build.

use robolog_mcap::Compression;

/// No compression, then LZ4 and zstd when compiled in.
pub(crate) fn compressions() -> Vec<Compression> {
    let mut all = vec![Compression::None];
    all.extend(
        [Compression::Lz4, Compression::Zstd]
            .into_iter()
            .filter(|c| c.is_enabled()),
    );
    all
}
