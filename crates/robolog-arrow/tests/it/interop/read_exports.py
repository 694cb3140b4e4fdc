"""Reads files robolog exported, with pyarrow and DuckDB, and prints what each reader sees.

Usage: python read_exports.py FILE...
For each file one JSON line: {"file", "pyarrow_rows", "duckdb_rows", "rows"}. "rows" are
every row as pyarrow converts it, written with robolog's JSON rules so that the test compares
them with its own rows value for value: bytes as base64, NaN and infinities as strings, times
as integer nanoseconds, maps with string keys as objects (others as [key, value] pairs).
Parquet files go through both readers (DuckDB counts the rows); .arrow files through pyarrow.
"""
import base64
import json
import math
import sys

import duckdb
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq


def plain(value, data_type):
    if value is None:
        return None
    if pa.types.is_struct(data_type):
        return {f.name: plain(value[f.name], f.type) for f in data_type}
    if pa.types.is_map(data_type):
        pairs = [(plain(k, data_type.key_type), plain(v, data_type.item_type)) for k, v in value]
        if pa.types.is_string(data_type.key_type):
            return dict(pairs)
        return [list(p) for p in pairs]
    if pa.types.is_list(data_type) or pa.types.is_fixed_size_list(data_type):
        return [plain(v, data_type.value_type) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def rows(table):
    columns = []
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_timestamp(field.type):
            # Nanoseconds since 1970 as integers: Python datetimes stop at microseconds.
            columns.append((field.name, pa.int64(), column.cast(pa.int64()).to_pylist()))
        else:
            columns.append((field.name, field.type, column.to_pylist()))
    return [
        {name: plain(values[i], data_type) for name, data_type, values in columns}
        for i in range(table.num_rows)
    ]


def main():
    for path in sys.argv[1:]:
        if path.endswith(".arrow"):
            with pa.ipc.open_file(path) as reader:
                table = reader.read_all()
            duck = None
        else:
            table = pq.read_table(path)
            duck = duckdb.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()[0]
        out = {
            "file": path,
            "pyarrow_rows": table.num_rows,
            "duckdb_rows": duck,
            "rows": rows(table),
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
