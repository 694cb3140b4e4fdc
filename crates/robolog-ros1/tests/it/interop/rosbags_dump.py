"""Dump every message of ROS 1 bags as rosbags deserializes them, for the Rust interop test.

Usage: python rosbags_dump.py BAG...

Prints one JSON object per line and message:
  {"bag", "topic", "type", "definition", "data": hex of the raw message bytes,
   "value": rosbags' deserialized message, tagged so that nothing is lost in JSON}

Tagging: floats are {"f": hex of the IEEE-754 double bits} (rosbags gives float32 values as
exactly widened doubles; NaN and infinities survive); numpy uint8 arrays are {"hex": ...};
other numpy arrays are lists; messages are {"m": [[name, value], ...]} in definition order.
"""

import dataclasses
import json
import struct
import sys

import numpy
from rosbags.rosbag1 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def tag(value, store):
    if isinstance(value, bool) or isinstance(value, numpy.bool_):
        return bool(value)
    if isinstance(value, (int, numpy.integer)):
        return int(value)
    if isinstance(value, (float, numpy.floating)):
        return {"f": struct.pack("<d", float(value)).hex()}
    if isinstance(value, str):
        return value
    if isinstance(value, numpy.ndarray):
        if value.dtype == numpy.uint8:
            return {"hex": value.tobytes().hex()}
        return [tag(item, store) for item in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [tag(item, store) for item in value]
    if dataclasses.is_dataclass(value):
        # The wire fields come from the type store: rosbags' dataclasses also carry the
        # constants and a `__msgtype__` attribute. Pairs keep the definition order through any
        # JSON reader.
        _, fields = store.fielddefs[value.__msgtype__]
        return {"m": [[name, tag(getattr(value, name), store)] for name, _ in fields]}
    raise TypeError(f"cannot tag {type(value)}: {value!r}")


def main():
    for path in sys.argv[1:]:
        with Reader(path) as reader:
            stores = {}
            for connection in reader.connections:
                store = get_typestore(Stores.EMPTY)
                store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
                stores[connection.id] = store
            for connection, _, raw in reader.messages():
                value = stores[connection.id].deserialize_ros1(raw, connection.msgtype)
                print(json.dumps({
                    "bag": path,
                    "topic": connection.topic,
                    "type": connection.msgtype,
                    "definition": connection.msgdef.data,
                    "data": bytes(raw).hex(),
                    "value": tag(value, stores[connection.id]),
                }))


if __name__ == "__main__":
    main()
