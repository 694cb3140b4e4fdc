"""RIHS01 type hashes of ROS 2 interface files, computed by rosidl's own Python code.

Usage: python rosidl-reference-hashes.py ROSIDL_SRC PACKAGES_DIR > hashes.tsv

ROSIDL_SRC is a checkout of ros2/rosidl (its rosidl_adapter, rosidl_parser, rosidl_cli and
rosidl_generator_type_description folders are put on the path; they need the PyPI packages
`lark` and `empy`). PACKAGES_DIR holds `<package>/{msg,srv,action}/<Name>.<ext>` files. Each file
goes the way a ROS build takes it: rosidl_adapter turns it into IDL (its templates), rosidl_parser
reads the IDL, and rosidl_generator_type_description describes and hashes every message, service
and action. Output: `<type name>\\t<RIHS01 hash>` per type, sorted by name.

This is how the reference hashes in testdata/ros2-hashes/ were made (see its README); it is not
run by the tests, since the rosidl sources are not a package CI can install.
"""

import pathlib
import sys
import tempfile


def main() -> None:
    rosidl, packages = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    for folder in ('rosidl_adapter', 'rosidl_parser', 'rosidl_cli',
                   'rosidl_generator_type_description'):
        sys.path.insert(0, str(rosidl / folder))

    from rosidl_adapter.parser import (parse_action_file, parse_message_file,
                                       parse_service_file)
    from rosidl_adapter.resource import evaluate_template
    from rosidl_generator_type_description import (
        add_action, add_msg, add_srv, calculate_type_hash, extract_full_type_description,
        serialize_individual_type_description)
    from rosidl_parser import definition
    from rosidl_parser.parser import parse_idl_file

    individual = {}
    with tempfile.TemporaryDirectory() as idl_root:
        idl_root = pathlib.Path(idl_root)
        for path in sorted(packages.glob('*/*/*')):
            package, kind, name = path.parts[-3], path.parts[-2], path.stem
            if (kind, path.suffix) == ('msg', '.msg'):
                spec = parse_message_file(package, str(path))
                idl = evaluate_template('msg.idl.em', {
                    'pkg_name': package, 'relative_input_file': f'{kind}/{path.name}',
                    'msg': spec})
            elif (kind, path.suffix) == ('srv', '.srv'):
                spec = parse_service_file(package, str(path))
                idl = evaluate_template('srv.idl.em', {
                    'pkg_name': package, 'relative_input_file': f'{kind}/{path.name}',
                    'srv': spec})
            elif (kind, path.suffix) == ('action', '.action'):
                spec = parse_action_file(package, str(path))
                idl = evaluate_template('action.idl.em', {
                    'pkg_name': package, 'relative_input_file': f'{kind}/{path.name}',
                    'action': spec})
            else:
                continue
            relative = pathlib.Path(package, kind, f'{name}.idl')
            (idl_root / relative).parent.mkdir(parents=True, exist_ok=True)
            (idl_root / relative).write_text(idl, encoding='utf-8')
            idl_file = parse_idl_file(definition.IdlLocator(idl_root, relative))
            for element in idl_file.content.elements:
                if isinstance(element, definition.Message):
                    add_msg(element, individual)
                elif isinstance(element, definition.Service):
                    add_srv(element, individual)
                elif isinstance(element, definition.Action):
                    add_action(element, individual)

    serialized = {
        name: serialize_individual_type_description(value.namespaced_type, value.members)
        for name, value in individual.items()
    }
    for name in sorted(serialized):
        try:
            full = extract_full_type_description(name, serialized)
        except KeyError as missing:
            print(f'{name}: missing {missing}', file=sys.stderr)
            continue
        print(f'{name}\t{calculate_type_hash(full)}')


if __name__ == '__main__':
    main()
