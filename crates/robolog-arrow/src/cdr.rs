//! ROS 2 (CDR) messages appended to columns: the value tree of `robolog-cdr` walked with the
//! same code as ROS 1 ones ([`crate::ros::tree_codec`]); the columns come from the same
//! definitions ([`crate::ros::message_members`], ROS 2 dialect), so `builtin_interfaces` times
//! are the messages they are (`{sec: int32, nanosec: uint32}`).

use robolog::cdr::{Element, Plan, PrimitiveArray, Projection, Tree, Value};

use crate::column::{Columns, Values};
use crate::ros::{mismatch, tree_codec};

tree_codec!(CdrCodec);

/// Wide strings (`wstring`), as UTF-8 (unpaired surrogates become U+FFFD).
fn append_special(columns: &mut Columns, node: usize, value: Value<'_>) -> Result<(), String> {
    match (value, &mut columns.nodes[node].values) {
        (Value::WString(text), Values::Utf8(b)) => {
            b.append_value(text.to_string_lossy());
            Ok(())
        }
        (value, _) => Err(mismatch(value.kind_name())),
    }
}

/// Every ROS 2 primitive array is one of the common kinds: anything else is a mismatch.
fn append_special_elements(
    _columns: &mut Columns,
    _item: usize,
    array: PrimitiveArray<'_>,
) -> Result<(), String> {
    Err(format!("a {} array does not fit its column", array.kind()))
}
