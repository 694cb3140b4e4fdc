"""Prints the ROS 1 md5sum that rosbags computes for each definition bundle in a file.

Input: records separated by a line holding only the ASCII record separator (0x1e); each record
is the top-level type name (`pkg/Type`) on its first line, then the bundle text.
Output: one md5sum per record, in order.
"""

import sys

from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def main() -> None:
    with open(sys.argv[1], encoding='utf-8') as handle:
        records = handle.read().split('\n\x1e\n')
    for record in records:
        if not record:
            continue
        top, bundle = record.split('\n', 1)
        package, name = top.split('/')
        ros2_name = f'{package}/msg/{name}'
        store = get_typestore(Stores.EMPTY)
        store.register(get_types_from_msg(bundle, ros2_name))
        print(store.generate_msgdef(ros2_name)[1])


if __name__ == '__main__':
    main()
