//! Record batches as JSON Lines, with robolog's decoded-value rules.

use std::io::Write;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimeUnit, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use base64::Engine as _;
use serde_json::Value as Json;

use crate::error::Result;

/// Writes each row of `batches` as one JSON object per line, keys in column order, with
/// robolog's rules for decoded values: 64-bit integers exact, NaN and infinities as the
/// strings `"NaN"`, `"Infinity"`, `"-Infinity"`, binary as base64, timestamps as integer
/// nanoseconds since 1970 (the unit robolog's JSON uses for times), structs as objects, lists
/// as arrays, maps as objects when their keys are strings (arrays of `[key, value]`
/// otherwise). Other types (decimals, dates, intervals) are written as Arrow displays them.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Float64Array, RecordBatch};
/// use arrow::array::Int32Array;
/// let batch = RecordBatch::try_from_iter([
///     ("x", Arc::new(Float64Array::from(vec![1.5, f64::NAN])) as _),
///     ("a", Arc::new(Int32Array::from(vec![1, 2])) as _),
/// ])?;
/// let mut out = Vec::new();
/// robolog_arrow::write_json_lines(&[batch], &mut out)?;
/// assert_eq!(String::from_utf8(out)?, "{\"x\":1.5,\"a\":1}\n{\"x\":\"NaN\",\"a\":2}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_json_lines(batches: &[RecordBatch], mut out: impl Write) -> Result<()> {
    for batch in batches {
        let schema = batch.schema();
        for row in 0..batch.num_rows() {
            let mut object = Vec::with_capacity(batch.num_columns());
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                object.push((field.name().clone(), value(column.as_ref(), row)?));
            }
            serde_json::to_writer(&mut out, &Node::Object(object))
                .map_err(std::io::Error::other)
                .map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
        }
    }
    Ok(())
}

/// A JSON value whose objects keep their keys in the order given (column order, definition
/// order), which `serde_json::Map` does not without a feature that would change the key
/// order of every other JSON document in the workspace.
enum Node {
    Leaf(Json),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

impl serde::Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Node::Leaf(value) => value.serialize(serializer),
            Node::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
        }
    }
}

fn io(error: std::io::Error) -> crate::Error {
    crate::Error::io(std::path::Path::new("output"), error)
}

fn float(v: f64) -> Json {
    if v.is_nan() {
        Json::from("NaN")
    } else if v.is_infinite() {
        Json::from(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number)
    }
}

/// A float32 in its shortest `f32` form (`0.1f32` is 0.1, not 0.10000000149011612), written
/// as robolog's JSON writes it, so that whole values stay floats (`1.0`, not `1`).
fn float32(v: f32) -> Json {
    if !v.is_finite() {
        return float(f64::from(v));
    }
    serde_json::to_string(&v)
        .ok()
        .and_then(|text| text.parse::<serde_json::Number>().ok())
        .map_or_else(|| float(f64::from(v)), Json::Number)
}

fn value(array: &dyn Array, row: usize) -> Result<Node> {
    if array.is_null(row) {
        return Ok(Node::Leaf(Json::Null));
    }
    let b64 = |bytes: &[u8]| Json::from(base64::engine::general_purpose::STANDARD.encode(bytes));
    Ok(Node::Leaf(match array.data_type() {
        DataType::Null => Json::Null,
        DataType::Boolean => Json::from(array.as_boolean().value(row)),
        DataType::Int8 => Json::from(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => Json::from(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => Json::from(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Json::from(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Json::from(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => Json::from(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => Json::from(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => Json::from(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float16 => float(f64::from(array.as_primitive::<Float16Type>().value(row))),
        DataType::Float32 => float32(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Json::from(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => Json::from(array.as_string::<i64>().value(row)),
        DataType::Utf8View => Json::from(array.as_string_view().value(row)),
        DataType::Binary => b64(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => b64(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => b64(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => b64(array.as_fixed_size_binary().value(row)),
        DataType::Timestamp(unit, _) => {
            use arrow::datatypes::{
                TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
                TimestampSecondType,
            };
            let (v, factor): (i64, i64) = match unit {
                TimeUnit::Second => (
                    array.as_primitive::<TimestampSecondType>().value(row),
                    1_000_000_000,
                ),
                TimeUnit::Millisecond => (
                    array.as_primitive::<TimestampMillisecondType>().value(row),
                    1_000_000,
                ),
                TimeUnit::Microsecond => (
                    array.as_primitive::<TimestampMicrosecondType>().value(row),
                    1_000,
                ),
                TimeUnit::Nanosecond => (
                    array.as_primitive::<TimestampNanosecondType>().value(row),
                    1,
                ),
            };
            v.checked_mul(factor).map_or(Json::from(v), Json::from)
        }
        DataType::Struct(fields) => {
            let array = array.as_struct();
            let mut object = Vec::with_capacity(fields.len());
            for (field, column) in fields.iter().zip(array.columns()) {
                object.push((field.name().clone(), value(column.as_ref(), row)?));
            }
            return Ok(Node::Object(object));
        }
        DataType::List(_) => return list(array.as_list::<i32>().value(row).as_ref()),
        DataType::LargeList(_) => return list(array.as_list::<i64>().value(row).as_ref()),
        DataType::FixedSizeList(..) => return list(array.as_fixed_size_list().value(row).as_ref()),
        DataType::Map(..) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let string_keys = matches!(
                keys.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            if string_keys {
                let mut object = Vec::with_capacity(entries.len());
                for i in 0..entries.len() {
                    let key = match value(keys.as_ref(), i)? {
                        Node::Leaf(Json::String(s)) => s,
                        // A null key (Arrow map keys are never null).
                        _ => String::new(),
                    };
                    object.push((key, value(values.as_ref(), i)?));
                }
                return Ok(Node::Object(object));
            }
            let mut pairs = Vec::with_capacity(entries.len());
            for i in 0..entries.len() {
                pairs.push(Node::Array(vec![
                    value(keys.as_ref(), i)?,
                    value(values.as_ref(), i)?,
                ]));
            }
            return Ok(Node::Array(pairs));
        }
        _ => {
            let formatter = ArrayFormatter::try_new(array, &FormatOptions::default())?;
            Json::from(formatter.value(row).to_string())
        }
    }))
}

fn list(items: &dyn Array) -> Result<Node> {
    (0..items.len())
        .map(|i| value(items, i))
        .collect::<Result<Vec<_>>>()
        .map(Node::Array)
}
