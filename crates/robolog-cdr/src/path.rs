//! Field paths (`header.stamp.sec`, `pose.position.x`, `ranges[3]`): checking them against a
//! plan once, and following them through a decoded tree. The syntax is robolog-msg's
//! ([`robolog_msg::parse_field_path`]), shared with the ROS 1 decoder.

use robolog_msg::{PathToken, parse_field_path};

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

/// What a path step has reached so far.
#[derive(Clone, Copy)]
enum Reached {
    Message(usize),
    Field { elem: Elem, count: Count },
    Element,
}

impl Plan {
    /// Checks `path` against the type: every name must be a field of the message it is applied
    /// to, and indices must follow arrays (and be below the length of fixed arrays). Times are
    /// messages: `header.stamp.sec`.
    ///
    /// ```
    /// let plan = robolog_cdr::Plan::from_bundle(
    ///     "my_pkg/msg/Scan",
    ///     "builtin_interfaces/Time stamp\nfloat32[] ranges\n",
    /// )?;
    /// assert!(plan.path("stamp.nanosec").is_ok());
    /// assert!(plan.path("ranges[3]").is_ok());
    /// assert!(plan.path("ranges.x").is_err());
    /// # Ok::<(), robolog_cdr::Error>(())
    /// ```
    pub fn path(&self, path: &str) -> Result<ResolvedPath, Error> {
        let tokens = parse_field_path(path).map_err(|e| Error::InvalidPath {
            path: e.path,
            reason: e.reason,
        })?;
        let mut steps = Vec::new();
        let mut names = Vec::new();
        let mut reached = Reached::Message(0);
        for token in tokens {
            match (token, reached) {
                (PathToken::Field(name), Reached::Message(id)) => {
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
                (PathToken::Field(name), _) => {
                    return Err(invalid(
                        path,
                        format!("`{name}` follows a value that has no fields"),
                    ));
                }
                (PathToken::Index(index), Reached::Field { elem, count })
                    if count != Count::One =>
                {
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
                        _ => Reached::Element,
                    };
                }
                (PathToken::Index(index), _) => {
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
                _ => return Err(mismatch()),
            };
        }
        Ok(value)
    }
}
