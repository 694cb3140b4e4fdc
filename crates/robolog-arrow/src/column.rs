//! Column shapes (the Arrow type of a message field, derived once per channel) and the
//! builders that values of every encoding are appended to.
//!
//! Builders live in one flat arena ([`Columns`]) addressed by index: a struct or list node
//! refers to its children by index, so an appender can hold the index of any column (the
//! leaves of a projection, say) without borrowing the tree.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBufferBuilder, FixedSizeBinaryBuilder,
    FixedSizeListArray, ListArray, MapArray, NullBufferBuilder, PrimitiveArray, StringBuilder,
    StructArray, new_empty_array,
};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Fields, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};

use crate::error::Error;

/// A primitive Arrow type a leaf column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Prim {
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float32,
    Float64,
}

/// The shape of a column: what Arrow type it becomes and how its children nest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    Prim(Prim),
    Utf8,
    Binary,
    FixedBinary(i32),
    Struct(Vec<Member>),
    List(Box<Shape>, bool),
    FixedList(Box<Shape>, i32),
    /// Keys, values (protobuf maps).
    Map(Box<Shape>, Box<Shape>, bool),
}

/// One child of a struct shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) shape: Shape,
    pub(crate) nullable: bool,
    /// Where the value comes from in the source message (field index in the definition), so
    /// that a struct can leave fields out (empty messages, projection) and still find the
    /// others.
    pub(crate) source: usize,
}

impl Member {
    pub(crate) fn new(
        name: impl Into<String>,
        shape: Shape,
        nullable: bool,
        source: usize,
    ) -> Self {
        Member {
            name: name.into(),
            shape,
            nullable,
            source,
        }
    }

    pub(crate) fn field(&self) -> Field {
        Field::new(&self.name, self.shape.data_type(), self.nullable)
    }
}

/// The name of list items, as Parquet's LIST convention and every reader expect.
const ITEM: &str = "item";

impl Shape {
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            Shape::Prim(p) => match p {
                Prim::Bool => DataType::Boolean,
                Prim::Int8 => DataType::Int8,
                Prim::UInt8 => DataType::UInt8,
                Prim::Int16 => DataType::Int16,
                Prim::UInt16 => DataType::UInt16,
                Prim::Int32 => DataType::Int32,
                Prim::UInt32 => DataType::UInt32,
                Prim::Int64 => DataType::Int64,
                Prim::UInt64 => DataType::UInt64,
                Prim::Float32 => DataType::Float32,
                Prim::Float64 => DataType::Float64,
            },
            Shape::Utf8 => DataType::Utf8,
            Shape::Binary => DataType::Binary,
            Shape::FixedBinary(n) => DataType::FixedSizeBinary(*n),
            Shape::Struct(members) => DataType::Struct(fields(members)),
            Shape::List(item, nullable) => {
                DataType::List(Arc::new(Field::new(ITEM, item.data_type(), *nullable)))
            }
            Shape::FixedList(item, n) => {
                DataType::FixedSizeList(Arc::new(Field::new(ITEM, item.data_type(), false)), *n)
            }
            Shape::Map(key, value, nullable) => {
                DataType::Map(map_entries(key, value, *nullable), false)
            }
        }
    }
}

pub(crate) fn fields(members: &[Member]) -> Fields {
    members.iter().map(Member::field).collect()
}

fn map_entries(key: &Shape, value: &Shape, nullable: bool) -> Arc<Field> {
    Arc::new(Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", key.data_type(), false),
            Field::new("value", value.data_type(), nullable),
        ])),
        false,
    ))
}

/// Values of one primitive column.
#[derive(Debug)]
pub(crate) struct PrimCol<T: ArrowPrimitiveType> {
    pub(crate) values: Vec<T::Native>,
}

impl<T: ArrowPrimitiveType> PrimCol<T> {
    fn finish(&mut self, nulls: Option<arrow::buffer::NullBuffer>) -> ArrayRef {
        // The next batch is most likely as long as this one: its buffer is allocated once
        // rather than grown by copying (and faulted in page by page) again and again.
        let len = self.values.len();
        let values =
            ScalarBuffer::from(std::mem::replace(&mut self.values, Vec::with_capacity(len)));
        Arc::new(PrimitiveArray::<T>::new(values, nulls))
    }
}

impl<T: ArrowPrimitiveType> Default for PrimCol<T> {
    fn default() -> Self {
        PrimCol { values: Vec::new() }
    }
}

/// The values of one column node.
#[derive(Debug)]
pub(crate) enum Values {
    Bool(BooleanBufferBuilder),
    Int8(PrimCol<Int8Type>),
    UInt8(PrimCol<UInt8Type>),
    Int16(PrimCol<Int16Type>),
    UInt16(PrimCol<UInt16Type>),
    Int32(PrimCol<Int32Type>),
    UInt32(PrimCol<UInt32Type>),
    Int64(PrimCol<Int64Type>),
    UInt64(PrimCol<UInt64Type>),
    Float32(PrimCol<Float32Type>),
    Float64(PrimCol<Float64Type>),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    FixedBinary(FixedSizeBinaryBuilder, i32),
    /// Children, and the struct's length (its children's).
    Struct(Vec<Child>, usize),
    /// Item column, offsets (first is 0).
    List(usize, Vec<i32>),
    FixedList(usize, i32, usize),
    /// Entries struct column (keys, values), offsets.
    Map(usize, Vec<i32>),
}

/// A child column of a struct node, and where its value comes from in the source message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Child {
    pub(crate) node: usize,
    pub(crate) source: usize,
}

/// One column node: its values, a validity buffer when it is nullable, and its Arrow type.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) values: Values,
    pub(crate) nulls: Option<NullBufferBuilder>,
    data_type: DataType,
}

/// The columns of a batch under construction, built from a top-level struct shape.
#[derive(Debug)]
pub(crate) struct Columns {
    pub(crate) nodes: Vec<Node>,
    /// The top-level columns (children of the root struct).
    pub(crate) top: Vec<usize>,
    members: Vec<Member>,
}

impl Columns {
    /// Builders for the members of a top-level struct (the message's fields).
    pub(crate) fn new(members: &[Member]) -> Self {
        let mut nodes = Vec::new();
        let top = members
            .iter()
            .map(|m| add(&mut nodes, &m.shape, m.nullable))
            .collect();
        Columns {
            nodes,
            top,
            members: members.to_vec(),
        }
    }

    /// The top-level members.
    pub(crate) fn members(&self) -> &[Member] {
        &self.members
    }

    /// Takes the columns built so far, leaving empty builders.
    pub(crate) fn finish(&mut self) -> Result<Vec<ArrayRef>, Error> {
        let top = self.top.clone();
        top.into_iter().map(|i| self.finish_node(i)).collect()
    }

    fn finish_node(&mut self, index: usize) -> Result<ArrayRef, Error> {
        let data_type = self.nodes[index].data_type.clone();
        let nulls = self.nodes[index]
            .nulls
            .as_mut()
            .and_then(NullBufferBuilder::finish);
        let array: ArrayRef = match &mut self.nodes[index].values {
            Values::Bool(b) => Arc::new(arrow::array::BooleanArray::new(b.finish(), nulls)),
            Values::Int8(c) => c.finish(nulls),
            Values::UInt8(c) => c.finish(nulls),
            Values::Int16(c) => c.finish(nulls),
            Values::UInt16(c) => c.finish(nulls),
            Values::Int32(c) => c.finish(nulls),
            Values::UInt32(c) => c.finish(nulls),
            Values::Int64(c) => c.finish(nulls),
            Values::UInt64(c) => c.finish(nulls),
            Values::Float32(c) => c.finish(nulls),
            Values::Float64(c) => c.finish(nulls),
            Values::Utf8(b) => with_nulls(Arc::new(b.finish()), nulls)?,
            Values::Binary(b) => with_nulls(Arc::new(b.finish()), nulls)?,
            Values::FixedBinary(b, _) => with_nulls(Arc::new(b.finish()), nulls)?,
            Values::Struct(children, len) => {
                let (children, len) = (children.clone(), std::mem::take(len));
                let DataType::Struct(fields) = data_type else {
                    return Err(Error::internal("struct column without struct type"));
                };
                let arrays = children
                    .into_iter()
                    .map(|c| self.finish_node(c.node))
                    .collect::<Result<Vec<_>, _>>()?;
                if arrays.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    Arc::new(StructArray::try_new(fields, arrays, nulls)?)
                }
            }
            Values::List(child, offsets) => {
                let (child, offsets) = (*child, next_offsets(offsets));
                let DataType::List(field) = data_type else {
                    return Err(Error::internal("list column without list type"));
                };
                let items = self.finish_node(child)?;
                Arc::new(ListArray::try_new(
                    field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    items,
                    nulls,
                )?)
            }
            Values::FixedList(child, size, _) => {
                let (child, size) = (*child, *size);
                let DataType::FixedSizeList(field, _) = data_type else {
                    return Err(Error::internal("fixed-size list column without its type"));
                };
                let items = self.finish_node(child)?;
                Arc::new(FixedSizeListArray::try_new(field, size, items, nulls)?)
            }
            Values::Map(entries, offsets) => {
                let (entries, offsets) = (*entries, next_offsets(offsets));
                let DataType::Map(field, sorted) = data_type else {
                    return Err(Error::internal("map column without map type"));
                };
                let entries = self.finish_node(entries)?;
                let entries = entries
                    .as_any()
                    .downcast_ref::<StructArray>()
                    .cloned()
                    .ok_or_else(|| Error::internal("map entries are not a struct"))?;
                Arc::new(MapArray::try_new(
                    field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    entries,
                    nulls,
                    sorted,
                )?)
            }
        };
        Ok(array)
    }

    /// Appends a null (or, for a column that cannot be null, the empty value) to column
    /// `index`, keeping every child the same length.
    pub(crate) fn append_null(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        if let Some(nulls) = &mut node.nulls {
            nulls.append_null();
        }
        match &mut node.values {
            Values::Bool(b) => b.append(false),
            Values::Int8(c) => c.values.push(0),
            Values::UInt8(c) => c.values.push(0),
            Values::Int16(c) => c.values.push(0),
            Values::UInt16(c) => c.values.push(0),
            Values::Int32(c) => c.values.push(0),
            Values::UInt32(c) => c.values.push(0),
            Values::Int64(c) => c.values.push(0),
            Values::UInt64(c) => c.values.push(0),
            Values::Float32(c) => c.values.push(0.0),
            Values::Float64(c) => c.values.push(0.0),
            // The builders keep their own validity; the node's buffer replaces it at the end.
            Values::Utf8(b) => b.append_value(""),
            Values::Binary(b) => b.append_value(b""),
            Values::FixedBinary(b, size) => {
                let zeros = vec![0u8; usize::try_from(*size).unwrap_or(0)];
                // The size matches the builder's by construction.
                let _ = b.append_value(zeros);
            }
            Values::Struct(children, len) => {
                *len += 1;
                let children = children.clone();
                for child in children {
                    self.append_null(child.node);
                }
            }
            Values::List(_, offsets) | Values::Map(_, offsets) => {
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last);
            }
            Values::FixedList(child, size, len) => {
                *len += 1;
                let (child, size) = (*child, *size);
                for _ in 0..size {
                    self.append_null(child);
                }
            }
        }
    }

    /// Starts one value of a struct (or fixed-size list) column: its children get their
    /// values next.
    #[inline]
    pub(crate) fn open(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        if let Some(nulls) = &mut node.nulls {
            nulls.append_non_null();
        }
        if let Values::Struct(_, len) | Values::FixedList(_, _, len) = &mut node.values {
            *len += 1;
        }
    }

    /// Child `k` of struct column `index`.
    #[inline]
    pub(crate) fn child(&self, index: usize, k: usize) -> Option<Child> {
        match &self.nodes[index].values {
            Values::Struct(children, _) => children.get(k).copied(),
            _ => None,
        }
    }

    /// The item (or entries) column of a list, fixed-size list or map column.
    #[inline]
    pub(crate) fn item(&self, index: usize) -> Option<usize> {
        match self.nodes[index].values {
            Values::List(child, _) | Values::FixedList(child, _, _) | Values::Map(child, _) => {
                Some(child)
            }
            _ => None,
        }
    }

    /// Marks one value of column `index` valid (for nullable columns; a no-op otherwise).
    #[inline]
    pub(crate) fn valid(&mut self, index: usize) {
        if let Some(nulls) = &mut self.nodes[index].nulls {
            nulls.append_non_null();
        }
    }

    /// Closes a list or map value after its items were appended to its child column.
    #[inline]
    pub(crate) fn close_list(&mut self, index: usize) -> Result<(), Error> {
        let item_len = match self.nodes[index].values {
            Values::List(child, _) => self.len(child),
            Values::Map(entries, _) => self.len(entries),
            _ => return Err(Error::internal("close_list on a column that is not a list")),
        };
        let end = i32::try_from(item_len).map_err(|_| Error::BatchTooLarge)?;
        self.valid(index);
        if let Values::List(_, offsets) | Values::Map(_, offsets) = &mut self.nodes[index].values {
            offsets.push(end);
        }
        Ok(())
    }

    /// The number of values in column `index`.
    pub(crate) fn len(&self, index: usize) -> usize {
        match &self.nodes[index].values {
            Values::Bool(b) => b.len(),
            Values::Int8(c) => c.values.len(),
            Values::UInt8(c) => c.values.len(),
            Values::Int16(c) => c.values.len(),
            Values::UInt16(c) => c.values.len(),
            Values::Int32(c) => c.values.len(),
            Values::UInt32(c) => c.values.len(),
            Values::Int64(c) => c.values.len(),
            Values::UInt64(c) => c.values.len(),
            Values::Float32(c) => c.values.len(),
            Values::Float64(c) => c.values.len(),
            Values::Utf8(b) => b.len(),
            Values::Binary(b) => b.len(),
            Values::FixedBinary(b, _) => b.len(),
            Values::Struct(_, len) | Values::FixedList(_, _, len) => *len,
            Values::List(_, offsets) | Values::Map(_, offsets) => offsets.len().saturating_sub(1),
        }
    }
}

/// Takes a list's offsets, leaving `[0]` with room for as many as were taken (see
/// [`PrimCol`]'s `finish`).
fn next_offsets(offsets: &mut Vec<i32>) -> Vec<i32> {
    let mut next = Vec::with_capacity(offsets.len());
    next.push(0);
    std::mem::replace(offsets, next)
}

/// Replaces the validity of an array its builder made (always valid) by `nulls`.
fn with_nulls(
    array: ArrayRef,
    nulls: Option<arrow::buffer::NullBuffer>,
) -> Result<ArrayRef, Error> {
    if nulls.is_none() {
        return Ok(array);
    }
    let data = array.to_data().into_builder().nulls(nulls).build()?;
    Ok(arrow::array::make_array(data))
}

/// Adds the builders of a column of `shape`, returning its index.
fn add(nodes: &mut Vec<Node>, shape: &Shape, nullable: bool) -> usize {
    let values = match shape {
        Shape::Prim(p) => match p {
            Prim::Bool => Values::Bool(BooleanBufferBuilder::new(0)),
            Prim::Int8 => Values::Int8(PrimCol::default()),
            Prim::UInt8 => Values::UInt8(PrimCol::default()),
            Prim::Int16 => Values::Int16(PrimCol::default()),
            Prim::UInt16 => Values::UInt16(PrimCol::default()),
            Prim::Int32 => Values::Int32(PrimCol::default()),
            Prim::UInt32 => Values::UInt32(PrimCol::default()),
            Prim::Int64 => Values::Int64(PrimCol::default()),
            Prim::UInt64 => Values::UInt64(PrimCol::default()),
            Prim::Float32 => Values::Float32(PrimCol::default()),
            Prim::Float64 => Values::Float64(PrimCol::default()),
        },
        Shape::Utf8 => Values::Utf8(StringBuilder::new()),
        Shape::Binary => Values::Binary(BinaryBuilder::new()),
        Shape::FixedBinary(n) => Values::FixedBinary(FixedSizeBinaryBuilder::new(*n), *n),
        Shape::Struct(members) => {
            // Reserve the struct's slot first so that children come after it.
            let index = reserve(nodes, shape, nullable);
            let children = members
                .iter()
                .map(|m| Child {
                    node: add(nodes, &m.shape, m.nullable),
                    source: m.source,
                })
                .collect();
            nodes[index].values = Values::Struct(children, 0);
            return index;
        }
        Shape::List(item, item_nullable) => {
            let index = reserve(nodes, shape, nullable);
            let child = add(nodes, item, *item_nullable);
            nodes[index].values = Values::List(child, vec![0]);
            return index;
        }
        Shape::FixedList(item, n) => {
            let index = reserve(nodes, shape, nullable);
            let child = add(nodes, item, false);
            nodes[index].values = Values::FixedList(child, *n, 0);
            return index;
        }
        Shape::Map(key, value, value_nullable) => {
            let index = reserve(nodes, shape, nullable);
            let entries = Shape::Struct(vec![
                Member::new("key", (**key).clone(), false, 0),
                Member::new("value", (**value).clone(), *value_nullable, 1),
            ]);
            let child = add(nodes, &entries, false);
            nodes[index].values = Values::Map(child, vec![0]);
            return index;
        }
    };
    nodes.push(Node {
        values,
        nulls: nullable.then(|| NullBufferBuilder::new(0)),
        data_type: shape.data_type(),
    });
    nodes.len() - 1
}

fn reserve(nodes: &mut Vec<Node>, shape: &Shape, nullable: bool) -> usize {
    nodes.push(Node {
        values: Values::Struct(Vec::new(), 0),
        nulls: nullable.then(|| NullBufferBuilder::new(0)),
        data_type: shape.data_type(),
    });
    nodes.len() - 1
}

/// An empty array of a column's type (for batches without a row).
#[allow(dead_code)]
pub(crate) fn empty(shape: &Shape) -> ArrayRef {
    new_empty_array(&shape.data_type())
}
