"""Read a ROS1 bag with PyPI rosbags and print what it holds, as JSON on stdout.

usage: read_bag.py BAG...

Output: {BAG: {"connections": [{"id", "topic", "md5sum", "msgdef", "callerid", "latching"}],
         "messages": [[conn_id, time_ns, sha1_of_raw_data_hex], ...]}, ...}
or {BAG: {"error": message}} for a bag rosbags refuses.
Messages are listed in the order rosbags yields them (time order).
"""
import hashlib
import json
import sys
from pathlib import Path

from rosbags.rosbag1 import Reader


def read(path: Path) -> dict:
    with Reader(path) as reader:
        connections = [
            {
                "id": c.id,
                "topic": c.topic,
                "md5sum": c.digest,
                "msgdef": c.msgdef.data if hasattr(c.msgdef, "data") else c.msgdef,
                "callerid": c.ext.callerid,
                "latching": c.ext.latching,
            }
            for c in reader.connections
        ]
        messages = [
            [c.id, t, hashlib.sha1(raw).hexdigest()]
            for c, t, raw in reader.messages()
        ]
    return {"connections": connections, "messages": messages}


def main() -> None:
    out = {}
    for arg in sys.argv[1:]:
        try:
            out[arg] = read(Path(arg))
        except Exception as e:  # rosbags refuses the bag: report why
            out[arg] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
