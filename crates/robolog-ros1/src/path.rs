//! Field paths (`header.stamp.secs`, `pose.position.x`, `ranges[3]`): parsing, checking them
//! against a plan once, and following them through a decoded tree.

use robolog_msg::{PathToken as Token, parse_field_path};

use crate::error::{Error, FieldPath, PathStep};
use crate::plan::{Count, Elem, Plan};
use crate::value::{Span, Tree, Value};

/// One checked step of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Field number `n` of the current message.
    Field(usize),
    /// Element `n` of the current array.
    Index(usize),
    /// The seconds of a `time` or `duration`.
    Secs,
    /// The nanoseconds of a `time` or `duration`.
    Nsecs,
}

/// A field path checked against a [`Plan`] ([`Plan::path`]): look it up in many messages
/// without parsing the text again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    pub(crate) text: String,
    pub(crate) steps: Vec<Step>,
    /// The path with field names, for errors.
    pub(crate) field_path: FieldPath,
}

impl ResolvedPath {
    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn invalid(path: &str, reason: impl Into<String>) -> Error {
    Error::InvalidPath {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn tokenize(path: &str) -> Result<Vec<Token<'_>>, Error> {
    parse_field_path(path).map_err(|e| Error::InvalidPath {
        path: e.path,
        reason: e.reason,
    })
}

/// What a path step has reached so far.
#[derive(Clone, Copy)]
enum Reached {
    Message(usize),
    Field { elem: Elem, count: Count },
    Element(Elem),
    TimePart,
}

impl Plan {
    /// Checks `path` against the type: every name must be a field of the message it is applied
    /// to, indices must follow arrays (and be below the length of fixed arrays), and
    /// `secs`/`nsecs` (or `sec`/`nsec`) may follow a `time` or `duration`.
    ///
    /// ```
    /// let plan = robolog_ros1::Plan::from_bundle("my_pkg/Scan", "time stamp\nfloat32[] ranges\n")?;
    /// assert!(plan.path("stamp.secs").is_ok());
    /// assert!(plan.path("ranges[3]").is_ok());
    /// assert!(plan.path("ranges.x").is_err());
    /// # Ok::<(), robolog_ros1::Error>(())
    /// ```
    pub fn path(&self, path: &str) -> Result<ResolvedPath, Error> {
        let mut steps = Vec::new();
        let mut names = Vec::new();
        let mut reached = Reached::Message(0);
        for token in tokenize(path)? {
            match (token, reached) {
                (Token::Field(name), Reached::Message(id)) => {
                    let message = self.message(id);
                    let index = message.field_index(name).ok_or_else(|| {
                        invalid(path, format!("{} has no field `{name}`", message.name))
                    })?;
                    let field = &message.fields[index];
                    steps.push(Step::Field(index));
                    names.push(PathStep::Field(name.to_owned()));
                    reached = match (field.elem, field.count) {
                        (Elem::Message(child), Count::One) => Reached::Message(child),
                        (elem, count) => Reached::Field { elem, count },
                    };
                }
                (
                    Token::Field(name),
                    Reached::Field {
                        elem: Elem::Prim(kind),
                        count: Count::One,
                    },
                )
                | (Token::Field(name), Reached::Element(Elem::Prim(kind)))
                    if matches!(
                        kind,
                        crate::value::PrimitiveKind::Time | crate::value::PrimitiveKind::Duration
                    ) =>
                {
                    let step = match name {
                        "secs" | "sec" => Step::Secs,
                        "nsecs" | "nsec" | "nanosec" => Step::Nsecs,
                        _ => {
                            return Err(invalid(
                                path,
                                format!("a {kind} has only `secs` and `nsecs`, not `{name}`"),
                            ));
                        }
                    };
                    steps.push(step);
                    names.push(PathStep::Field(name.to_owned()));
                    reached = Reached::TimePart;
                }
                (Token::Field(name), _) => {
                    return Err(invalid(
                        path,
                        format!("`{name}` follows a value that has no fields"),
                    ));
                }
                (Token::Index(index), Reached::Field { elem, count }) if count != Count::One => {
                    if let Count::Fixed(n) = count
                        && index as u64 >= n
                    {
                        return Err(invalid(
                            path,
                            format!("index {index} is past the end of an array of {n}"),
                        ));
                    }
                    steps.push(Step::Index(index));
                    names.push(PathStep::Index(index as u64));
                    reached = match elem {
                        Elem::Message(child) => Reached::Message(child),
                        other => Reached::Element(other),
                    };
                }
                (Token::Index(index), _) => {
                    return Err(invalid(
                        path,
                        format!("[{index}] follows a value that is not an array"),
                    ));
                }
            }
        }
        Ok(ResolvedPath {
            text: path.to_owned(),
            steps,
            field_path: FieldPath::from_steps(names),
        })
    }

    /// Follows a checked path through a tree decoded with this plan.
    pub(crate) fn lookup<'a>(
        &self,
        tree: &Tree<'a>,
        root: Span,
        path: &ResolvedPath,
    ) -> Result<Value<'a>, Error> {
        let mismatch = || invalid(&path.text, "the tree does not have the shape of the plan");
        let mut value = Value::Message(root);
        for step in &path.steps {
            value = match (*step, value) {
                (Step::Field(index), Value::Message(span)) => {
                    *tree.span(span).get(index).ok_or_else(mismatch)?
                }
                (Step::Index(index), Value::Array(array)) => {
                    array.get(index).ok_or_else(|| Error::IndexOutOfRange {
                        path: path.field_path.clone(),
                        index,
                        len: array.len(),
                    })?
                }
                (Step::Index(index), Value::Strings(span) | Value::Messages(span)) => *tree
                    .span(span)
                    .get(index)
                    .ok_or_else(|| Error::IndexOutOfRange {
                        path: path.field_path.clone(),
                        index,
                        len: span.len,
                    })?,
                (Step::Secs, Value::Time(t)) => Value::UInt32(t.secs),
                (Step::Nsecs, Value::Time(t)) => Value::UInt32(t.nsecs),
                (Step::Secs, Value::Duration(d)) => Value::Int32(d.secs),
                (Step::Nsecs, Value::Duration(d)) => Value::Int32(d.nsecs),
                _ => return Err(mismatch()),
            };
        }
        Ok(value)
    }
}
