//! Built with `--no-default-features` (or without one codec), the missing codecs say which feature
//! to enable. `.ci/run` runs this file under each feature combination.

use robolog_framing::{CodecError, Compression, Decompressor, compress};

#[test]
fn disabled_codecs_name_their_feature() {
    for codec in Compression::ALL {
        let mut out = Vec::new();
        let compressed = compress(codec, b"data", &mut out);
        let decompressed = Decompressor::new().decompress(codec, b"data", 4, 1024, &mut Vec::new());
        if codec.is_enabled() {
            compressed.unwrap();
        } else {
            let expected = CodecError::Disabled { codec };
            assert_eq!(compressed.unwrap_err(), expected);
            assert_eq!(decompressed.unwrap_err(), expected);
            let feature = codec.feature().unwrap();
            assert_eq!(
                expected.to_string(),
                format!(
                    "compiled without {feature} support: enable the `{feature}` feature of robolog-framing"
                )
            );
        }
    }
    assert_eq!(Compression::Lz4.is_enabled(), cfg!(feature = "lz4"));
    assert_eq!(Compression::Zstd.is_enabled(), cfg!(feature = "zstd"));
    assert_eq!(Compression::Bz2.is_enabled(), cfg!(feature = "bz2"));
}
