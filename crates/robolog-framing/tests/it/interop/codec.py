"""Compress or decompress a file with the reference C libraries (liblz4, libzstd, libbz2).

usage: codec.py compress|decompress lz4|lz4-linked|zstd|bz2 INPUT OUTPUT
"""
import bz2
import sys

import lz4.frame
import zstandard


def main() -> None:
    action, codec, src, dst = sys.argv[1:5]
    data = open(src, "rb").read()
    if action == "compress":
        if codec == "lz4":
            out = lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX1MB,
                                     content_checksum=True, store_size=False)
        elif codec == "lz4-linked":
            out = lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                     block_linked=True, block_checksum=True,
                                     content_checksum=True, store_size=True)
        elif codec == "zstd":
            out = zstandard.ZstdCompressor(level=5).compress(data)
        elif codec == "bz2":
            out = bz2.compress(data, 9)
        else:
            raise SystemExit(f"unknown codec {codec}")
    else:
        if codec.startswith("lz4"):
            out = lz4.frame.decompress(data)
        elif codec == "zstd":
            out = zstandard.ZstdDecompressor().decompress(data)
        elif codec == "bz2":
            out = bz2.decompress(data)
        else:
            raise SystemExit(f"unknown codec {codec}")
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
