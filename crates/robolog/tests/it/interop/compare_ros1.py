"""Compare ROS 1 values: rosbags reading a bag against the official MCAP reader with its ROS 1
decoder (mcap-ros1-support) reading the MCAP file robolog converted the bag into.

Usage: python compare_ros1.py BAG MCAP [BAG MCAP ...]

For each pair, every message of the bag (rosbags 0.11.9, deserialized from the bag's own
definitions) and of the MCAP file (mcap 1.6.0 make_reader + mcap_ros1 DecoderFactory, log-time
order) is turned into one normalised value: messages as [[field, value], ...] in definition
order (constants left out), floats as the hex of their IEEE-754 double bits (float32 values
are exactly widened by both readers, so NaN payloads and -0.0 survive), byte arrays as hex,
time and duration as ["time"|"duration", sec, nsec], bools as 0/1. Messages are compared in
(log time, topic, bytes) order, which does not depend on how each reader orders ties.

Prints one JSON line per pair: {"bag", "messages", "mcap_messages", "mismatches": [...]}, and
exits with status 1 when any pair differs.
"""

import dataclasses
import json
import struct
import sys

import numpy
from mcap.reader import make_reader
from mcap_ros1.decoder import DecoderFactory
from rosbags.rosbag1 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def norm_rosbags(value, store):
    if isinstance(value, (bool, numpy.bool_)):
        return int(bool(value))
    if isinstance(value, (int, numpy.integer)):
        return int(value)
    if isinstance(value, (float, numpy.floating)):
        return struct.pack("<d", float(value)).hex()
    if isinstance(value, str):
        return value
    if isinstance(value, numpy.ndarray):
        if value.dtype == numpy.uint8:
            return {"hex": value.tobytes().hex()}
        return [norm_rosbags(item, store) for item in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [norm_rosbags(item, store) for item in value]
    if dataclasses.is_dataclass(value):
        msgtype = value.__msgtype__
        if msgtype == "builtin_interfaces/msg/Time":
            return ["time", int(value.sec), int(value.nanosec)]
        if msgtype == "builtin_interfaces/msg/Duration":
            return ["duration", int(value.sec), int(value.nanosec)]
        _, fields = store.fielddefs[msgtype]
        return [[name, norm_rosbags(getattr(value, name), store)] for name, _ in fields]
    raise TypeError(f"cannot normalise {type(value)}: {value!r}")


def norm_genpy(value, slot_type=None):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return struct.pack("<d", value).hex()
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        element = slot_type.split("[")[0] if slot_type else None
        if element in ("uint8", "char"):
            return {"hex": bytes(value).hex()}
        return [norm_genpy(item, element) for item in value]
    kind = type(value).__name__
    if kind in ("Time", "Duration") and hasattr(value, "secs"):
        return [kind.lower(), int(value.secs), int(value.nsecs)]
    if hasattr(value, "__slots__") and hasattr(value, "_slot_types"):
        return [
            [name, norm_genpy(getattr(value, name), t)]
            for name, t in zip(value.__slots__, value._slot_types)
        ]
    raise TypeError(f"cannot normalise {type(value)}: {value!r}")


def bag_messages(path):
    out = []
    with Reader(path) as reader:
        stores = {}
        for connection in reader.connections:
            store = get_typestore(Stores.EMPTY)
            store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
            stores[connection.id] = store
        for connection, timestamp, raw in reader.messages():
            store = stores[connection.id]
            value = store.deserialize_ros1(raw, connection.msgtype)
            out.append((timestamp, connection.topic, bytes(raw).hex(), norm_rosbags(value, store)))
    return out


def mcap_messages(path):
    out = []
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _schema, channel, message, decoded in reader.iter_decoded_messages(
            log_time_order=True
        ):
            out.append((message.log_time, channel.topic, bytes(message.data).hex(), norm_genpy(decoded)))
    return out


def main():
    args = sys.argv[1:]
    failed = False
    for bag, mcap in zip(args[::2], args[1::2]):
        expected = sorted(bag_messages(bag), key=lambda m: m[:3])
        got = sorted(mcap_messages(mcap), key=lambda m: m[:3])
        mismatches = []
        if len(expected) != len(got):
            mismatches.append(f"{len(expected)} messages in the bag, {len(got)} in the MCAP file")
        for a, b in zip(expected, got):
            if a != b:
                mismatches.append({"bag": a, "mcap": b})
                if len(mismatches) >= 3:
                    break
        failed |= bool(mismatches)
        print(json.dumps({
            "bag": bag,
            "messages": len(expected),
            "mcap_messages": len(got),
            "mismatches": mismatches,
        }))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
