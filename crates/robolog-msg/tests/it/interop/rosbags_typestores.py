"""Prints the message types of rosbags' ROS 2 typestores, one line per item, in `.msg` spelling.

Arguments: store names (`ros2_humble`, ...). Output, for each type of each store:
`T <store> <pkg/Type>`, then `C <type> <NAME> <value>` per constant and `F <type> <name>` per
field. Types are written as in a `.msg` file (`pkg/Type`, `string<=N`, `T[N]`, `T[]`,
`T[<=N]`); values as `true`/`false`, integers in decimal, floats with `repr`, strings as JSON.
rosidl's `structure_needs_at_least_one_member` of an empty message is left out.
"""

import json
import sys

from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_typestore


def spell(desc) -> str:
    kind, rest = desc
    if kind == Nodetype.BASE:
        name, bound = rest
        return f'{name}<={bound}' if bound else name
    if kind == Nodetype.NAME:
        package, _, name = rest.split('/')
        return f'{package}/{name}'
    inner, size = rest
    if kind == Nodetype.ARRAY:
        return f'{spell(inner)}[{size}]'
    return f'{spell(inner)}[<={size}]' if size else f'{spell(inner)}[]'


def value(constant) -> str:
    if isinstance(constant, bool):
        return 'true' if constant else 'false'
    if isinstance(constant, int):
        return str(constant)
    if isinstance(constant, float):
        return repr(constant)
    return json.dumps(constant)


def main() -> None:
    for store_name in sys.argv[1:]:
        store = get_typestore(Stores(store_name))
        for type_name in sorted(store.fielddefs):
            constants, fields = store.fielddefs[type_name]
            package, _, name = type_name.split('/')
            print(f'T {store_name} {package}/{name}')
            for constant_name, constant_type, constant_value in constants:
                print(f'C {constant_type} {constant_name} {value(constant_value)}')
            if [f[0] for f in fields] == ['structure_needs_at_least_one_member']:
                continue
            for field_name, desc in fields:
                print(f'F {spell(desc)} {field_name}')


if __name__ == '__main__':
    main()
