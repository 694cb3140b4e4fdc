//! A decoded message and the named views over it: the [`Tree`] knows values, the [`Plan`]
//! knows field names and types; these types join the two.

use robolog_msg::TypeName;

use crate::decode::Decoding;
use crate::error::Error;
use crate::header::Encapsulation;
use crate::path::ResolvedPath;
use crate::plan::{Count, Elem, FieldPlan, Plan};
use crate::value::{Span, Tree, Value, WideString};

/// One decoded message: its [`Tree`] plus the plan that gives the values names.
#[derive(Debug, Clone)]
pub struct Decoded<'p, 'a> {
    plan: &'p Plan,
    tree: Tree<'a>,
    data: &'a [u8],
    decoding: Decoding,
}

impl<'p, 'a> Decoded<'p, 'a> {
    pub(crate) fn new(plan: &'p Plan, tree: Tree<'a>, data: &'a [u8], decoding: Decoding) -> Self {
        Decoded {
            plan,
            tree,
            data,
            decoding,
        }
    }

    /// The plan the message was decoded with.
    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    /// The value tree.
    pub fn tree(&self) -> &Tree<'a> {
        &self.tree
    }

    /// The value tree, e.g. to change values and encode it again.
    pub fn into_tree(self) -> Tree<'a> {
        self.tree
    }

    /// What decoding found besides the values (encapsulation, end, trailing bytes).
    pub fn decoding(&self) -> Decoding {
        self.decoding
    }

    /// The message's encapsulation.
    pub fn encapsulation(&self) -> Encapsulation {
        self.decoding.encapsulation()
    }

    /// How many bytes followed the end of the message beyond up to 3 bytes of padding (0 for a
    /// well-formed message).
    pub fn trailing_bytes(&self) -> usize {
        self.decoding.trailing_bytes()
    }

    /// What [`Plan::decode_strict`] would refuse in this message (the first such thing, with
    /// its field path and offset), or `None` for a regular message.
    pub fn warning(&self) -> Option<Error> {
        (!self.decoding.is_regular()).then(|| self.plan.strict_error(self.data))
    }

    /// The top-level message with field names.
    pub fn root(&self) -> MessageRef<'_, 'a> {
        self.plan.view(&self.tree)
    }

    /// The value at `path` (`header.stamp.sec`, `pose.position.x`, `ranges[3]`).
    ///
    /// Nested messages and arrays of strings or messages come back as spans; use
    /// [`Decoded::root`] and [`FieldRef`] to walk them with names.
    pub fn get(&self, path: &str) -> Result<Value<'a>, Error> {
        let resolved = self.plan.path(path)?;
        self.get_resolved(&resolved)
    }

    /// The value at a path checked once with [`Plan::path`].
    pub fn get_resolved(&self, path: &ResolvedPath) -> Result<Value<'a>, Error> {
        self.plan.lookup(&self.tree, self.tree.root(), path)
    }

    /// Encodes the message again with its own encapsulation: byte-exact with the decoded
    /// bytes, except where decoding was lenient (see [`Plan::encode`]).
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        self.plan.encode_as(&self.tree, self.encapsulation())
    }
}

impl Plan {
    /// A named view of a tree decoded (or built) for this plan.
    pub fn view<'t, 'a>(&'t self, tree: &'t Tree<'a>) -> MessageRef<'t, 'a> {
        MessageRef {
            plan: self,
            tree,
            id: 0,
            span: tree.root(),
        }
    }
}

/// A message in a tree, with its type's field names.
#[derive(Debug, Clone, Copy)]
pub struct MessageRef<'t, 'a> {
    plan: &'t Plan,
    tree: &'t Tree<'a>,
    id: usize,
    span: Span,
}

impl<'t, 'a> MessageRef<'t, 'a> {
    /// The message type.
    pub fn type_name(&self) -> &'t TypeName {
        &self.plan.message(self.id).name
    }

    /// The fields in definition order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = FieldRef<'t, 'a>> + use<'t, 'a> {
        let (plan, tree) = (self.plan, self.tree);
        self.plan
            .message(self.id)
            .fields
            .iter()
            .zip(tree.span(self.span).iter().copied())
            .map(move |(field, value)| FieldRef {
                plan,
                tree,
                field,
                value,
            })
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<FieldRef<'t, 'a>> {
        let message = self.plan.message(self.id);
        let index = message.field_index(name)?;
        let value = *self.tree.span(self.span).get(index)?;
        Some(FieldRef {
            plan: self.plan,
            tree: self.tree,
            field: &message.fields[index],
            value,
        })
    }

    /// The value at `path` below this message (only for the top-level message: paths are
    /// checked against the plan's top type).
    pub fn get(&self, path: &str) -> Result<Value<'a>, Error> {
        let resolved = self.plan.path(path)?;
        self.plan.lookup(self.tree, self.span, &resolved)
    }

    #[cfg(feature = "serde")]
    pub(crate) fn plan(&self) -> &'t Plan {
        self.plan
    }

    #[cfg(feature = "serde")]
    pub(crate) fn id(&self) -> usize {
        self.id
    }

    #[cfg(feature = "serde")]
    pub(crate) fn values(&self) -> &'t [Value<'a>] {
        self.tree.span(self.span)
    }

    #[cfg(feature = "serde")]
    pub(crate) fn tree(&self) -> &'t Tree<'a> {
        self.tree
    }
}

/// One field of a [`MessageRef`]: its name, type and value.
#[derive(Debug, Clone, Copy)]
pub struct FieldRef<'t, 'a> {
    plan: &'t Plan,
    tree: &'t Tree<'a>,
    field: &'t FieldPlan,
    value: Value<'a>,
}

impl<'t, 'a> FieldRef<'t, 'a> {
    /// The field name.
    pub fn name(&self) -> &'t str {
        &self.field.name
    }

    /// The field's type as written in the definition (package-qualified).
    pub fn type_text(&self) -> &'t str {
        &self.field.type_text
    }

    /// The value.
    pub fn value(&self) -> Value<'a> {
        self.value
    }

    /// The nested message, for a message field.
    pub fn as_message(&self) -> Option<MessageRef<'t, 'a>> {
        match (self.field.elem, self.field.count, self.value) {
            (Elem::Message(id), Count::One, Value::Message(span)) => Some(MessageRef {
                plan: self.plan,
                tree: self.tree,
                id,
                span,
            }),
            _ => None,
        }
    }

    /// The elements, for an array of messages.
    pub fn messages(
        &self,
    ) -> Option<impl ExactSizeIterator<Item = MessageRef<'t, 'a>> + use<'t, 'a>> {
        let (plan, tree) = (self.plan, self.tree);
        match (self.field.elem, self.value) {
            (Elem::Message(id), Value::Messages(span)) => {
                Some(tree.span(span).iter().map(move |element| MessageRef {
                    plan,
                    tree,
                    id,
                    span: match element {
                        Value::Message(span) => *span,
                        _ => Span::default(),
                    },
                }))
            }
            _ => None,
        }
    }

    /// The elements, for an array of strings (raw bytes, UTF-8 by convention).
    pub fn strings(&self) -> Option<impl ExactSizeIterator<Item = &'a [u8]> + use<'t, 'a>> {
        match (self.field.elem, self.value) {
            (Elem::String, Value::Strings(span)) => Some(
                self.tree
                    .span(span)
                    .iter()
                    .map(|v| v.as_bytes().unwrap_or(&[])),
            ),
            _ => None,
        }
    }

    /// The elements, for an array of wide strings.
    pub fn wstrings(&self) -> Option<impl ExactSizeIterator<Item = WideString<'a>> + use<'t, 'a>> {
        match (self.field.elem, self.value) {
            (Elem::WString, Value::Strings(span)) => Some(self.tree.span(span).iter().map(|v| {
                v.as_wstring()
                    .unwrap_or(WideString::new_unchecked_len(&[], Default::default()))
            })),
            _ => None,
        }
    }
}
