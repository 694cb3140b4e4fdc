"""Compares ROS 2 bags pairwise as rosbags reads them: each bag's messages deserialized with the
definitions that bag stores, as plain values, per topic in log-time order.

Usage: compare_ros2_bags.py REFERENCE OURS [REFERENCE OURS ...]

Prints one JSON line per pair: message counts, topics and types of each side, and the first
mismatches (empty when every message of every topic has the same values and log time).
"""

import json
import sys
from pathlib import Path

import numpy as np
from rosbags.interfaces import MessageDefinitionFormat
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore, get_types_from_idl, get_types_from_msg


def plain(value):
    """A deserialized value as JSON-comparable data (floats as their repr, NaN equal)."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (np.floating,)):
        return repr(float(value))
    if isinstance(value, (np.integer,)):
        return int(value)
    if hasattr(value, '__dataclass_fields__'):
        return {name: plain(getattr(value, name)) for name in value.__dataclass_fields__}
    return value


def read(path):
    """{topic: [(log time, value), ...]}, {topic: type}, message count."""
    typestore = get_typestore(Stores.EMPTY)
    out = {}
    types = {}
    count = 0
    with Reader(Path(path)) as reader:
        found = {}
        for conn in reader.connections:
            types[conn.topic] = conn.msgtype
            if conn.msgdef.format == MessageDefinitionFormat.IDL:
                found.update(get_types_from_idl(conn.msgdef.data))
            else:
                found.update(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        typestore.register(found)
        for conn, timestamp, raw in reader.messages():
            message = typestore.deserialize_cdr(raw, conn.msgtype)
            out.setdefault(conn.topic, []).append((timestamp, plain(message)))
            count += 1
    return out, types, count


def main():
    args = sys.argv[1:]
    for reference, ours in zip(args[::2], args[1::2]):
        want, want_types, want_count = read(reference)
        got, got_types, got_count = read(ours)
        mismatches = []
        for topic in sorted(set(want) | set(got)):
            a = want.get(topic, [])
            b = got.get(topic, [])
            if len(a) != len(b):
                mismatches.append({'topic': topic, 'reference': len(a), 'ours': len(b)})
                continue
            for (ta, va), (tb, vb) in zip(a, b):
                if ta != tb or va != vb:
                    mismatches.append(
                        {'topic': topic, 'time': ta, 'reference': va, 'ours': [tb, vb]}
                    )
                    break
        print(
            json.dumps(
                {
                    'reference': reference,
                    'ours': ours,
                    'messages': want_count,
                    'our_messages': got_count,
                    'types': want_types,
                    'our_types': got_types,
                    'mismatches': mismatches[:5],
                },
                default=str,
            )
        )


if __name__ == '__main__':
    main()
