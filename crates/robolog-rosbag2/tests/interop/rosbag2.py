"""rosbags (the reference Python implementation) against robolog-rosbag2.

    rosbag2.py read PATH [--files]    every message of a bag as JSON lines (rosbags' reader)
    rosbag2.py write PATH STORAGE VERSION COMPRESSION SEED
                                      a bag with random std_msgs/String and sensor_msgs/Imu
                                      messages on three topics, written by rosbags; prints what
                                      was written as JSON lines

`read --files` reads each storage file of a directory alone (rosbags' directory reader
matches a file's topics to metadata.yaml's by their QoS text, which some upstream bags do not
repeat exactly).
"""

import json
import random
import sys
from pathlib import Path

from rosbags.rosbag2 import CompressionFormat, CompressionMode, Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from ruamel.yaml import YAML


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")


def read(path, per_file):
    path = Path(path)
    if per_file and path.is_dir():
        yaml = YAML(typ="safe")
        meta = yaml.load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        files = [path / Path(p).name for p in meta["relative_file_paths"]]
    else:
        files = [path]
    with Reader(path) as reader:
        emit({
            "kind": "bag",
            "message_count": reader.message_count,
            "topics": sorted([c.topic, c.msgtype, c.msgcount] for c in reader.connections),
        })
    for file in files:
        with Reader(file) as reader:
            for conn, timestamp, data in reader.messages():
                emit({
                    "kind": "message",
                    "topic": conn.topic,
                    "time": timestamp,
                    "data": bytes(data).hex(),
                })


def write(path, storage, version, compression, seed):
    rng = random.Random(seed)
    store = get_typestore(Stores.ROS2_JAZZY)
    String = store.types["std_msgs/msg/String"]
    Imu = store.types["sensor_msgs/msg/Imu"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    Quaternion = store.types["geometry_msgs/msg/Quaternion"]
    Vector3 = store.types["geometry_msgs/msg/Vector3"]
    import numpy as np

    path = Path(path)
    # rosbags writes metadata versions 8 and 9; older ones are made from 8 below.
    writer = Writer(
        path,
        version=9 if version == 9 else 8,
        storage_plugin=StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP,
    )
    if compression != "none":
        writer.set_compression(CompressionMode[compression.upper()], CompressionFormat.ZSTD)
    with writer:
        chatter = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        imu = writer.add_connection("/imu", "sensor_msgs/msg/Imu", typestore=store)
        empty = writer.add_connection("/empty", "std_msgs/msg/String", typestore=store)
        del empty
        t = 1_700_000_000_000_000_000 + rng.randrange(10**9)
        for i in range(rng.randrange(50, 150)):
            t += rng.randrange(0, 3_000_000)
            if rng.random() < 0.5:
                text = "".join(rng.choice("abcdefgh ") for _ in range(rng.randrange(0, 200)))
                data = store.serialize_cdr(String(data=text), "std_msgs/msg/String")
                conn = chatter
            else:
                stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
                msg = Imu(
                    header=Header(stamp=stamp, frame_id=f"imu{i % 3}"),
                    orientation=Quaternion(x=rng.random(), y=rng.random(), z=rng.random(), w=1.0),
                    orientation_covariance=np.array([rng.random() for _ in range(9)]),
                    angular_velocity=Vector3(x=rng.random(), y=-rng.random(), z=0.5),
                    angular_velocity_covariance=np.zeros(9),
                    linear_acceleration=Vector3(x=9.81, y=rng.random(), z=0.0),
                    linear_acceleration_covariance=np.zeros(9),
                )
                data = store.serialize_cdr(msg, "sensor_msgs/msg/Imu")
                conn = imu
            writer.write(conn, t, data)
            emit({
                "kind": "message",
                "topic": conn.topic,
                "time": t,
                "data": bytes(data).hex(),
            })
    if version < 8:
        yaml = YAML()
        meta_path = path / "metadata.yaml"
        doc = yaml.load(meta_path.read_text())
        info = doc["rosbag2_bagfile_information"]
        info["version"] = version
        info.pop("ros_distro", None)
        if version < 7:
            for topic in info["topics_with_message_count"]:
                topic["topic_metadata"].pop("type_description_hash", None)
        if version < 6:
            info.pop("custom_data", None)
        with meta_path.open("w") as out:
            yaml.dump(doc, out)


def main():
    if sys.argv[1] == "read":
        read(sys.argv[2], "--files" in sys.argv[3:])
    elif sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
