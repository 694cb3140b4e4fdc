"""CDR messages serialized and deserialized by rosbags, for the Rust interop tests.

Usage:
  python rosbags_cdr.py typestores COUNT   every type of the humble and jazzy typestores
  python rosbags_cdr.py custom COUNT       custom types with every rare .msg feature
  python rosbags_cdr.py mcap FILE...       every message of MCAP files (cdr / ros2msg)

Prints one JSON object per line and message:
  {"source", "type", "definition": the ros2msg schema text, "data": hex of the CDR bytes
   (little endian), "data_be": hex of the same value serialized big endian (generated
   messages only), "reencoded": rosbags' serialization of what it read (MCAP messages only),
   "value": rosbags' deserialized message, tagged so that nothing is lost}

Tagging: floats are {"f": hex of the IEEE-754 double bits} (float32 values arrive exactly
widened; NaN and infinities survive); numpy uint8 arrays are {"hex": ...}; other numpy arrays
are lists; messages are {"m": [[name, value], ...]} in definition order, without the
`structure_needs_at_least_one_member` placeholder of empty messages (its byte is not a field
of the .msg). Random values are generated from a fixed seed per type, so runs repeat.
"""

import dataclasses
import json
import random
import struct
import sys

import numpy
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import Nodetype

PLACEHOLDER = "structure_needs_at_least_one_member"
SEPARATOR = "=" * 80

INTEGER_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    # rosbags writes and reads a scalar `byte` as int8 (rosidl's octet is unsigned): the same
    # byte on the wire, which the Rust test compares modulo 256.
    "byte": (-(2**7), 2**7 - 1),
    "char": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
DTYPES = {"bool": numpy.bool_, "byte": numpy.uint8, "char": numpy.uint8, "float32": numpy.float32,
          "float64": numpy.float64}
TEXT = "abcxyz _-/ÄéΩ漢😀"


def fields_of(store, name):
    """The wire fields of a type, without the empty-message placeholder."""
    _, fields = store.fielddefs[name]
    return [(n, d) for n, d in fields if n != PLACEHOLDER]


def is_empty(store, name):
    _, fields = store.fielddefs[name]
    return [n for n, _ in fields] == [PLACEHOLDER]


def short(name):
    """`pkg/msg/Type` as a .msg field type: `pkg/Type`."""
    package, _, type_name = name.split("/")
    return f"{package}/{type_name}"


def type_text(desc):
    kind, rest = desc
    if kind == Nodetype.BASE:
        base, bound = rest
        return f"{base}<={bound}" if bound else base
    if kind == Nodetype.NAME:
        return short(rest)
    inner, size = rest
    if kind == Nodetype.ARRAY:
        return f"{type_text(inner)}[{size}]"
    return f"{type_text(inner)}[<={size}]" if size else f"{type_text(inner)}[]"


def msg_text(store, name):
    constants, _ = store.fielddefs[name]
    lines = [f"{typ} {cname}={value}" for cname, typ, value in constants]
    lines += [f"{type_text(desc)} {field}" for field, desc in fields_of(store, name)]
    return "".join(line + "\n" for line in lines)


def nested(desc):
    kind, rest = desc
    if kind == Nodetype.NAME:
        yield rest
    elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        yield from nested(rest[0])


def bundle(store, name, long_names):
    """The root's text, then a section per dependency (depth first, each once), the way
    rosbag2 lays out a ros2msg schema; section names `pkg/msg/Type` or `pkg/Type`."""
    seen = {name}
    order = []

    def visit(type_name):
        for _, desc in fields_of(store, type_name):
            for child in nested(desc):
                if child not in seen:
                    seen.add(child)
                    order.append(child)
                    visit(child)

    visit(name)
    text = msg_text(store, name)
    for dep in order:
        header = dep if long_names else short(dep)
        text += f"\n{SEPARATOR}\nMSG: {header}\n{msg_text(store, dep)}"
    return text


def random_string(rng, bound):
    limit = bound if bound else 12
    out = ""
    for _ in range(rng.randint(0, limit)):
        char = rng.choice(TEXT)
        if len((out + char).encode()) > limit:
            break
        out += char
    return out


def random_float(rng, base):
    pick = rng.random()
    if pick < 0.05:
        return rng.choice([float("nan"), float("inf"), float("-inf"), -0.0])
    value = rng.uniform(-1e6, 1e6) if pick < 0.7 else rng.choice([0.0, 1.5, -2.25, 1e-300])
    if base == "float32":
        value = float(numpy.float32(value))
    return value


def random_base(rng, base, bound):
    if base == "bool":
        return rng.random() < 0.5
    if base in ("float32", "float64"):
        return random_float(rng, base)
    if base == "string":
        return random_string(rng, bound)
    low, high = INTEGER_RANGES[base]
    return rng.choice([low, high, 0, rng.randint(low, high)])


def random_value(store, desc, rng):
    kind, rest = desc
    if kind == Nodetype.BASE:
        return random_base(rng, *rest)
    if kind == Nodetype.NAME:
        return random_message(store, rest, rng)
    inner, size = rest
    if kind == Nodetype.ARRAY:
        count = size
    else:
        # Empty sequences often (they must not pad for the next field).
        count = rng.choice([0, 0, 1, 2, 3])
        if size:
            count = min(count, size)
    if inner[0] == Nodetype.BASE and inner[1][0] != "string":
        base = inner[1][0]
        dtype = DTYPES.get(base) or getattr(numpy, base)
        values = [random_base(rng, base, 0) for _ in range(count)]
        if base == "byte":
            values = [v & 0xFF for v in values]
        return numpy.array(values, dtype=dtype)
    return [random_value(store, inner, rng) for _ in range(count)]


def random_message(store, name, rng):
    cls = store.types[name]
    _, fields = store.fielddefs[name]
    args = {}
    for field, desc in fields:
        args[field] = 0 if field == PLACEHOLDER else random_value(store, desc, rng)
    return cls(**args)


def tag(value, store):
    if isinstance(value, (bool, numpy.bool_)):
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
        fields = fields_of(store, value.__msgtype__)
        return {"m": [[name, tag(getattr(value, name), store)] for name, _ in fields]}
    raise TypeError(f"cannot tag {type(value)}: {value!r}")


def emit(source, name, definition, store, value):
    data = bytes(store.serialize_cdr(value, name))
    data_be = bytes(store.serialize_cdr(value, name, little_endian=False))
    back = store.deserialize_cdr(data, name)
    print(json.dumps({
        "source": source,
        "type": name,
        "definition": definition,
        "data": data.hex(),
        "data_be": data_be.hex(),
        "value": tag(back, store),
    }))


def typestores(count):
    for store_name, store_id in (("humble", Stores.ROS2_HUMBLE), ("jazzy", Stores.ROS2_JAZZY)):
        store = get_typestore(store_id)
        for index, name in enumerate(sorted(store.fielddefs)):
            definition = bundle(store, name, long_names=index % 2 == 0)
            if is_empty(store, name):
                # The .msg of an empty message has no fields; its byte is not one.
                definition = bundle(store, name, long_names=False)
            rng = random.Random(f"{store_name}/{name}")
            for _ in range(count):
                emit(store_name, name, definition, store, random_message(store, name, rng))


CUSTOM = {
    "custom_msgs/msg/Inner": """\
float64 first
string<=4 label
""",
    "custom_msgs/msg/Rare": """\
# Constants and defaults are not on the wire.
uint8 MODE_A=1
int32 LIMIT=-5
string<=5 bounded "abc"
string<=3[2] bounded_fixed
string<=4[<=3] bounded_seq
string[3] names
int32[<=3] ints
float64[] empty_first
int64 after_empty
uint8[] bytes_empty
float64 w 1.0
byte b
char c
byte[4] octets
char[] chars
uint8[<=5] small
bool[] flags
bool[2] pair
int8[] signed
custom_msgs/Inner[2] inners
custom_msgs/Inner[<=2] inner_seq
custom_msgs/Inner[] inner_any
std_msgs/Empty[] empties
std_msgs/Empty nothing
builtin_interfaces/Duration span
uint8 tail
""",
}


def custom(count):
    store = get_typestore(Stores.ROS2_JAZZY)
    for name, text in CUSTOM.items():
        store.register(get_types_from_msg(text, name))
    # The schema as a writer would store it: the custom text verbatim (comments, constants and
    # defaults included), then the dependencies.
    name = "custom_msgs/msg/Rare"
    generated = bundle(store, name, long_names=True)
    sections = generated.split(f"\n{SEPARATOR}\n")
    sections[0] = CUSTOM[name]
    definition = f"\n{SEPARATOR}\n".join(sections)
    rng = random.Random(name)
    for _ in range(count):
        emit("custom", name, definition, store, random_message(store, name, rng))


def event_store(name, text):
    """A typestore for a service event channel: rosbag2 stores the `.srv` text of the service;
    the event type is built as rosidl builds it (rosbags has no reader for that)."""
    if SEPARATOR[:3] in text:
        raise ValueError(f"{name}: only bare .srv texts are handled here")
    package, _, event = name.split("/")
    service = event.removesuffix("_Event")
    request, response = text.split("\n---\n", 1) if "\n---\n" in text else text.split("---\n", 1)
    # rosbags files every type under `pkg/msg/`.
    store = get_typestore(Stores.ROS2_JAZZY)
    prefix = f"{package}/msg/{service}"
    store.register(get_types_from_msg(request, f"{prefix}_Request"))
    store.register(get_types_from_msg(response, f"{prefix}_Response"))
    store.register(get_types_from_msg(
        "service_msgs/msg/ServiceEventInfo info\n"
        f"{prefix}_Request[<=1] request\n"
        f"{prefix}_Response[<=1] response\n",
        f"{prefix}_Event",
    ))
    return store, f"{prefix}_Event"


def mcap(paths):
    from mcap.reader import make_reader

    for path in paths:
        with open(path, "rb") as handle:
            for schema, channel, message in make_reader(handle).iter_messages():
                if channel.message_encoding != "cdr" or schema is None:
                    continue
                text = schema.data.decode()
                if schema.name.endswith("_Event") and "/srv/" in schema.name:
                    store, typename = event_store(schema.name, text)
                else:
                    store, typename = get_typestore(Stores.EMPTY), schema.name
                    store.register(get_types_from_msg(text, schema.name))
                value = store.deserialize_cdr(message.data, typename)
                print(json.dumps({
                    "source": path,
                    "type": schema.name,
                    "encoding": schema.encoding,
                    "topic": channel.topic,
                    "definition": text,
                    "data": message.data.hex(),
                    # Recorders leave whatever was in their buffer in padding bytes; rosbags,
                    # like us, writes zeros.
                    "reencoded": bytes(store.serialize_cdr(value, typename)).hex(),
                    "value": tag(value, store),
                }))


def main():
    command, *args = sys.argv[1:]
    if command == "typestores":
        typestores(int(args[0]))
    elif command == "custom":
        custom(int(args[0]))
    elif command == "mcap":
        mcap(args)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
