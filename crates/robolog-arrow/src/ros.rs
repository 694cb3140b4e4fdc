//! ROS message definitions as column shapes, and ROS 1 messages appended to columns (ROS 2
//! ones in `cdr.rs`, with the same code: [`tree_codec`]).
//!
//! Shapes come from the parsed definitions (`robolog-msg`), so they exist before the first
//! message (an empty topic still has its columns). Values come from `robolog-ros1`: the whole
//! message decoded into a value tree that is walked once, or, when a projection selects a few
//! leaves, only those leaves read straight from the bytes ([`robolog_ros1::Projection`]).

use robolog::msg::{ArrayKind, Dialect, ElementType, PrimitiveType, Registry, TypeName};
use robolog::ros1::{Element, Plan, PrimitiveArray, PrimitiveKind, Projection, Tree, Value};

use crate::column::{Columns, Member, Prim, Shape, Values};

/// Deepest nesting of message types turned into columns (plans refuse deeper ones anyway).
const MAX_DEPTH: usize = 100;

/// The members (columns) of message `name` from `registry`, in definition order. Fields whose
/// type has no field at all (`std_msgs/Empty`) are left out: Parquet cannot store an empty
/// group.
pub(crate) fn message_members(
    registry: &Registry,
    name: &TypeName,
    dialect: Dialect,
) -> Result<Vec<Member>, String> {
    members(registry, name, dialect, 0)
}

fn members(
    registry: &Registry,
    name: &TypeName,
    dialect: Dialect,
    depth: usize,
) -> Result<Vec<Member>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("messages nest more than {MAX_DEPTH} levels deep"));
    }
    let definition = registry.require(name).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(definition.fields.len());
    for (index, field) in definition.fields.iter().enumerate() {
        let element = match &field.ty.element {
            ElementType::Primitive(p) => primitive_shape(*p, dialect),
            ElementType::BoundedString { .. } => Shape::Utf8,
            ElementType::Message(child) => {
                let inner = members(registry, child, dialect, depth + 1)?;
                if inner.is_empty() {
                    continue;
                }
                Shape::Struct(inner)
            }
        };
        let bytes = matches!(element, Shape::Prim(Prim::UInt8 | Prim::Int8))
            && matches!(
                field.ty.element,
                ElementType::Primitive(
                    PrimitiveType::UInt8 | PrimitiveType::Byte | PrimitiveType::Char
                )
            );
        let shape = match field.ty.array {
            ArrayKind::Scalar => element,
            ArrayKind::Fixed(n) => {
                let n = i32::try_from(n).map_err(|_| {
                    format!("field {}: {n} elements are too many for Arrow", field.name)
                })?;
                if bytes {
                    Shape::FixedBinary(n)
                } else {
                    Shape::FixedList(Box::new(element), n)
                }
            }
            ArrayKind::Variable | ArrayKind::Bounded(_) => {
                if bytes {
                    Shape::Binary
                } else {
                    Shape::List(Box::new(element), false)
                }
            }
        };
        out.push(Member::new(&field.name, shape, false, index));
    }
    Ok(out)
}

fn primitive_shape(primitive: PrimitiveType, dialect: Dialect) -> Shape {
    let wire = match dialect {
        Dialect::Ros1 => primitive.ros1_wire_type(),
        Dialect::Ros2 => primitive.ros2_wire_type(),
    };
    Shape::Prim(match wire {
        PrimitiveType::Bool => Prim::Bool,
        PrimitiveType::Int8 | PrimitiveType::Byte => Prim::Int8,
        PrimitiveType::UInt8 | PrimitiveType::Char => Prim::UInt8,
        PrimitiveType::Int16 => Prim::Int16,
        PrimitiveType::UInt16 => Prim::UInt16,
        PrimitiveType::Int32 => Prim::Int32,
        PrimitiveType::UInt32 => Prim::UInt32,
        PrimitiveType::Int64 => Prim::Int64,
        PrimitiveType::UInt64 => Prim::UInt64,
        PrimitiveType::Float32 => Prim::Float32,
        PrimitiveType::Float64 => Prim::Float64,
        PrimitiveType::String | PrimitiveType::WString => return Shape::Utf8,
        PrimitiveType::Time | PrimitiveType::Duration if matches!(dialect, Dialect::Ros2) => {
            return ros2_time_shape();
        }
        PrimitiveType::Time => return time_shape(false),
        PrimitiveType::Duration => return time_shape(true),
    })
}

/// ROS 2 `time` and `duration` (spellings of `builtin_interfaces/Time` and `Duration`): the
/// messages they are, `{sec: int32, nanosec: uint32}`.
fn ros2_time_shape() -> Shape {
    Shape::Struct(vec![
        Member::new("sec", Shape::Prim(Prim::Int32), false, 0),
        Member::new("nanosec", Shape::Prim(Prim::UInt32), false, 1),
    ])
}

/// ROS 1 `time` (`{sec: uint32, nsec: uint32}`) and `duration` (`{sec: int32, nsec: int32}`).
fn time_shape(signed: bool) -> Shape {
    let p = if signed { Prim::Int32 } else { Prim::UInt32 };
    Shape::Struct(vec![
        Member::new("sec", Shape::Prim(p), false, 0),
        Member::new("nsec", Shape::Prim(p), false, 1),
    ])
}

/// At most this many leaves are read path by path; each path skips from the start of the
/// message, so beyond a few the whole-tree decode is cheaper.
const MAX_PROJECTED_LEAVES: usize = 8;

/// Defines `$codec`, the decoder of one ROS wire format into columns, with the functions it
/// appends values with. The value trees of `robolog-ros1` and `robolog-cdr` have the same
/// shape (a flat arena of values, spans for nested messages and for arrays of strings or
/// messages, zero-copy primitive arrays) and the same API, but are different types: the
/// invoking module brings its crate's `Plan`, `Tree`, `Value`, `PrimitiveArray` and `Element`
/// into scope, and defines `append_special(columns, node, value)` and
/// `append_special_elements(columns, item, array)` for what only its wire has (ROS 1 times,
/// ROS 2 wide strings).
macro_rules! tree_codec {
    ($codec:ident) => {
        /// A channel's decoder: the compiled plan, a tree kept between messages, and for a
        /// projection of a few leaves, the compiled paths.
        #[derive(Debug)]
        pub(crate) struct $codec {
            plan: std::sync::Arc<Plan>,
            spare: Tree<'static>,
            leaves: Option<Leaves>,
        }

        /// A projection read leaf by leaf from the bytes.
        #[derive(Debug)]
        struct Leaves {
            projection: Projection,
            /// The column each path's value goes to.
            columns: Vec<usize>,
            /// Struct columns (nested messages) that get one value per message.
            structs: Vec<usize>,
        }

        impl $codec {
            pub(crate) fn new(plan: std::sync::Arc<Plan>) -> Self {
                $codec {
                    plan,
                    spare: Tree::new(),
                    leaves: None,
                }
            }

            /// Prepares the leaf-by-leaf read when `columns` (a projection of the message's
            /// fields) selects only a few leaves and no array of messages or strings.
            pub(crate) fn project(&mut self, columns: &Columns, all_selected: bool) {
                if all_selected {
                    return;
                }
                let Some((paths, targets, structs)) = $crate::ros::projected_leaves(columns) else {
                    return;
                };
                let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
                if let Ok(projection) = self.plan.projection(&refs) {
                    self.leaves = Some(Leaves {
                        projection,
                        columns: targets,
                        structs,
                    });
                }
            }

            /// Appends one message.
            pub(crate) fn append(
                &mut self,
                data: &[u8],
                columns: &mut Columns,
            ) -> Result<(), String> {
                if let Some(leaves) = &self.leaves {
                    let mut failure = None;
                    // Check every leaf first: a message must add to all columns or to none.
                    let mut values = Vec::with_capacity(leaves.columns.len());
                    leaves
                        .projection
                        .visit(data, |_, value| values.push(value))
                        .map_err(|e| e.to_string())?;
                    for &s in &leaves.structs {
                        columns.open(s);
                    }
                    let empty = Tree::new();
                    for (value, &column) in values.into_iter().zip(&leaves.columns) {
                        match value {
                            Some(value) => {
                                if let Err(e) = append_value(columns, column, value, &empty) {
                                    failure.get_or_insert(e);
                                }
                            }
                            None => columns.append_null(column),
                        }
                    }
                    return failure.map_or(Ok(()), Err);
                }
                let mut tree = std::mem::take(&mut self.spare).recycle();
                let result = self
                    .plan
                    .decode_into(data, &mut tree)
                    .map_err(|e| e.to_string())
                    .and_then(|_| {
                        let fields = tree.root_fields();
                        for k in 0..columns.top.len() {
                            let node = columns.top[k];
                            let source = columns.members()[k].source;
                            let value = *fields.get(source).ok_or_else(|| {
                                "the message has fewer fields than its definition".to_owned()
                            })?;
                            append_value(columns, node, value, &tree)?;
                        }
                        Ok(())
                    });
                self.spare = tree.recycle();
                result
            }
        }

        /// Appends one value of the tree to column `node`.
        fn append_value(
            columns: &mut Columns,
            node: usize,
            value: Value<'_>,
            tree: &Tree<'_>,
        ) -> Result<(), String> {
            let values = &mut columns.nodes[node].values;
            match (value, values) {
                (Value::Bool(v), Values::Bool(b)) => b.append(v),
                (Value::Int8(v), Values::Int8(c)) => c.values.push(v),
                (Value::UInt8(v), Values::UInt8(c)) => c.values.push(v),
                (Value::Int16(v), Values::Int16(c)) => c.values.push(v),
                (Value::UInt16(v), Values::UInt16(c)) => c.values.push(v),
                (Value::Int32(v), Values::Int32(c)) => c.values.push(v),
                (Value::UInt32(v), Values::UInt32(c)) => c.values.push(v),
                (Value::Int64(v), Values::Int64(c)) => c.values.push(v),
                (Value::UInt64(v), Values::UInt64(c)) => c.values.push(v),
                (Value::Float32(v), Values::Float32(c)) => c.values.push(v),
                (Value::Float64(v), Values::Float64(c)) => c.values.push(v),
                (Value::String(bytes), Values::Utf8(b)) => $crate::ros::append_text(b, bytes),
                (Value::Array(array), Values::Binary(b)) => b.append_value(array.as_bytes()),
                (Value::Array(array), Values::FixedBinary(b, _)) => b
                    .append_value(array.as_bytes())
                    .map_err(|e| e.to_string())?,
                (Value::Message(span), Values::Struct(..)) => {
                    columns.open(node);
                    let fields = tree.span(span);
                    let mut k = 0;
                    while let Some(child) = columns.child(node, k) {
                        let value = *fields.get(child.source).ok_or_else(|| {
                            "a nested message has fewer fields than its definition".to_owned()
                        })?;
                        append_value(columns, child.node, value, tree)?;
                        k += 1;
                    }
                }
                (Value::Array(array), Values::List(item, _)) => {
                    let item = *item;
                    append_elements(columns, item, array)?;
                    columns.close_list(node).map_err(|e| e.to_string())?;
                }
                (Value::Array(array), Values::FixedList(item, ..)) => {
                    let item = *item;
                    columns.open(node);
                    append_elements(columns, item, array)?;
                }
                (Value::Strings(span) | Value::Messages(span), Values::List(item, _)) => {
                    let item = *item;
                    for element in tree.span(span) {
                        append_value(columns, item, *element, tree)?;
                    }
                    columns.close_list(node).map_err(|e| e.to_string())?;
                }
                (Value::Strings(span) | Value::Messages(span), Values::FixedList(item, ..)) => {
                    let item = *item;
                    columns.open(node);
                    for element in tree.span(span) {
                        append_value(columns, item, *element, tree)?;
                    }
                }
                (value, _) => return append_special(columns, node, value),
            }
            Ok(())
        }

        /// Appends the elements of a primitive array to the item column `item`.
        fn append_elements(
            columns: &mut Columns,
            item: usize,
            array: PrimitiveArray<'_>,
        ) -> Result<(), String> {
            fn extend<T: Element>(
                values: &mut Vec<T>,
                array: PrimitiveArray<'_>,
            ) -> Result<(), String> {
                let elements = array
                    .iter_as::<T>()
                    .ok_or_else(|| format!("a {} array does not fit its column", array.kind()))?;
                values.extend(elements);
                Ok(())
            }
            match &mut columns.nodes[item].values {
                Values::Bool(b) => {
                    let elements = array.iter_as::<bool>().ok_or_else(|| {
                        format!("a {} array does not fit its column", array.kind())
                    })?;
                    for v in elements {
                        b.append(v);
                    }
                }
                Values::Int8(c) => extend(&mut c.values, array)?,
                Values::UInt8(c) => extend(&mut c.values, array)?,
                Values::Int16(c) => extend(&mut c.values, array)?,
                Values::UInt16(c) => extend(&mut c.values, array)?,
                Values::Int32(c) => extend(&mut c.values, array)?,
                Values::UInt32(c) => extend(&mut c.values, array)?,
                Values::Int64(c) => extend(&mut c.values, array)?,
                Values::UInt64(c) => extend(&mut c.values, array)?,
                Values::Float32(c) => extend(&mut c.values, array)?,
                Values::Float64(c) => extend(&mut c.values, array)?,
                _ => return append_special_elements(columns, item, array),
            }
            Ok(())
        }
    };
}
pub(crate) use tree_codec;

tree_codec!(Ros1Codec);

/// ROS 1 times and durations, scalar: `{sec, nsec}` structs.
fn append_special(columns: &mut Columns, node: usize, value: Value<'_>) -> Result<(), String> {
    match (value, &columns.nodes[node].values) {
        (Value::Time(t), Values::Struct(..)) => {
            columns.open(node);
            push_pair(columns, node, t.secs, t.nsecs)
        }
        (Value::Duration(d), Values::Struct(..)) => {
            columns.open(node);
            push_pair(columns, node, d.secs, d.nsecs)
        }
        (value, _) => Err(mismatch(value.kind_name())),
    }
}

/// ROS 1 times and durations, in arrays.
fn append_special_elements(
    columns: &mut Columns,
    item: usize,
    array: PrimitiveArray<'_>,
) -> Result<(), String> {
    match (&columns.nodes[item].values, array.kind()) {
        (Values::Struct(..), PrimitiveKind::Time | PrimitiveKind::Duration) => {
            let empty = Tree::new();
            for value in array.iter() {
                append_value(columns, item, value, &empty)?;
            }
            Ok(())
        }
        _ => Err(format!("a {} array does not fit its column", array.kind())),
    }
}

/// The leaf paths a projection of `columns` reads, the column each goes to and the struct
/// columns on the way; `None` when there are too many leaves or a column holds something a
/// projection cannot read (arrays of messages or strings).
pub(crate) fn projected_leaves(columns: &Columns) -> Option<(Vec<String>, Vec<usize>, Vec<usize>)> {
    let mut paths = Vec::new();
    let mut targets = Vec::new();
    let mut structs = Vec::new();
    for (member, &node) in columns.members().iter().zip(&columns.top) {
        if !leaf_paths(
            columns,
            &member.shape,
            node,
            member.name.clone(),
            &mut paths,
            &mut targets,
            &mut structs,
        ) {
            return None;
        }
    }
    (paths.len() <= MAX_PROJECTED_LEAVES).then_some((paths, targets, structs))
}

/// Collects the leaf paths below a column; false when the column holds something a
/// projection cannot read (arrays of messages or strings).
fn leaf_paths(
    columns: &Columns,
    shape: &Shape,
    node: usize,
    path: String,
    paths: &mut Vec<String>,
    targets: &mut Vec<usize>,
    structs: &mut Vec<usize>,
) -> bool {
    match shape {
        Shape::Struct(members) if !is_time(members) => {
            structs.push(node);
            for (k, member) in members.iter().enumerate() {
                let Some(child) = columns.child(node, k) else {
                    return false;
                };
                if !leaf_paths(
                    columns,
                    &member.shape,
                    child.node,
                    format!("{path}.{}", member.name),
                    paths,
                    targets,
                    structs,
                ) {
                    return false;
                }
            }
            true
        }
        Shape::List(item, _) | Shape::FixedList(item, _)
            if !matches!(**item, Shape::Prim(_)) && !is_time_shape(item) =>
        {
            false
        }
        _ => {
            paths.push(path);
            targets.push(node);
            true
        }
    }
}

fn is_time(members: &[Member]) -> bool {
    members.len() == 2 && members[0].name == "sec" && members[1].name == "nsec"
}

fn is_time_shape(shape: &Shape) -> bool {
    matches!(shape, Shape::Struct(m) if is_time(m))
}

pub(crate) fn mismatch(kind: &str) -> String {
    format!("a {kind} value does not fit its column (the definition changed?)")
}

/// Strings are UTF-8 in Arrow: bytes that are not become U+FFFD, as in robolog's JSON.
pub(crate) fn append_text(builder: &mut arrow::array::StringBuilder, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => builder.append_value(text),
        Err(_) => builder.append_value(String::from_utf8_lossy(bytes)),
    }
}

fn push_pair<T: Element + Into<PairValue>>(
    columns: &mut Columns,
    node: usize,
    sec: T,
    nsec: T,
) -> Result<(), String> {
    let (Some(a), Some(b)) = (columns.child(node, 0), columns.child(node, 1)) else {
        return Err("a time column without sec and nsec".to_owned());
    };
    for (child, v) in [(a.node, sec.into()), (b.node, nsec.into())] {
        match (&mut columns.nodes[child].values, v) {
            (Values::UInt32(c), PairValue::U(v)) => c.values.push(v),
            (Values::Int32(c), PairValue::I(v)) => c.values.push(v),
            _ => return Err("a time value does not fit its column".to_owned()),
        }
    }
    Ok(())
}

enum PairValue {
    U(u32),
    I(i32),
}

impl From<u32> for PairValue {
    fn from(v: u32) -> Self {
        PairValue::U(v)
    }
}

impl From<i32> for PairValue {
    fn from(v: i32) -> Self {
        PairValue::I(v)
    }
}
