"""Times rosbags reading every message of the bags `benches/read.rs` writes.

    rosbags_read.py target/bench-rosbag2

Prints the median and the best of seven full reads of each bag, and the median's throughput.
"""

import statistics
import sys
import time
from pathlib import Path

from rosbags.rosbag2 import Reader


def read_all(path):
    n = 0
    with Reader(path) as reader:
        for _, _, data in reader.messages():
            n += len(data)
    return n


def main():
    root = Path(sys.argv[1])
    for name, path in [
        ("db3", root / "single" / "single_0.db3"),
        ("split_dir", root / "split"),
        ("mcap_dir", root / "mcap"),
    ]:
        times = []
        for _ in range(7):
            start = time.perf_counter()
            size = read_all(path)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(
            f"{name}: median {median * 1000:.1f} ms, best {min(times) * 1000:.1f} ms "
            f"({size / median / 1e6:.0f} MB/s, {size} bytes)"
        )


if __name__ == "__main__":
    main()
