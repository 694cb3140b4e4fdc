"""Times rosbags' CDR deserializer on the messages `cargo bench -p robolog-cdr --bench decode`
writes to target/cdr-bench/ (the same bytes the Rust benchmark decodes).

Usage: target/interop-venv/bin/python crates/robolog-cdr/benches/rosbags_decode.py

Prints, per message, the median time of one `deserialize_cdr` call over several rounds.
"""

import pathlib
import statistics
import sys
import time

from rosbags.typesys import Stores, get_typestore

MESSAGES = {
    "imu": "sensor_msgs/msg/Imu",
    "cloud64k": "sensor_msgs/msg/PointCloud2",
    "cloud16384k": "sensor_msgs/msg/PointCloud2",
}


def main():
    root = pathlib.Path(__file__).resolve().parents[3] / "target" / "cdr-bench"
    store = get_typestore(Stores.ROS2_JAZZY)
    for name, typename in MESSAGES.items():
        data = (root / f"{name}.cdr").read_bytes()
        store.deserialize_cdr(data, typename)
        # Enough calls per round for about 0.2 s.
        start = time.perf_counter()
        store.deserialize_cdr(data, typename)
        once = time.perf_counter() - start
        calls = max(1, int(0.2 / max(once, 1e-9)))
        rounds = []
        for _ in range(15):
            start = time.perf_counter()
            for _ in range(calls):
                store.deserialize_cdr(data, typename)
            rounds.append((time.perf_counter() - start) / calls)
        median = statistics.median(rounds)
        print(f"{name}: {len(data)} bytes, rosbags deserialize_cdr {median * 1e6:.3f} µs "
              f"(median of {len(rounds)} rounds of {calls} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
