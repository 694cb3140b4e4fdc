//! YAML in and out: typed access to a parsed document that names the key path in its errors,
//! and the small block-style emitter that writes metadata.yaml the way rosbag2's yaml-cpp does.

use std::fmt::Write as _;

use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// A YAML document could not be read as expected: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum YamlError {
    /// Not YAML at all.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// YAML, but a key has the wrong type or value.
    Shape { key: String, message: String },
}

/// Parses `text`, which must hold exactly one document (an empty text is an empty mapping).
pub(crate) fn parse(text: &str) -> Result<Yaml<'_>, YamlError> {
    let mut docs = Yaml::load_from_str(text).map_err(|e| YamlError::Syntax {
        line: e.marker().line(),
        column: e.marker().col() + 1,
        message: e.info().to_owned(),
    })?;
    match docs.len() {
        0 => Ok(Yaml::Mapping(saphyr::Mapping::new())),
        1 => Ok(docs.remove(0)),
        n => Err(YamlError::Shape {
            key: String::new(),
            message: format!("{n} YAML documents where one was expected"),
        }),
    }
}

/// A node of a parsed document and the key path that leads to it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a, 'y> {
    yaml: &'a Yaml<'y>,
    path: &'a str,
}

/// An owned key path, for building child paths.
#[derive(Debug)]
pub(crate) struct At {
    path: String,
}

impl At {
    pub(crate) fn root() -> Self {
        Self {
            path: String::new(),
        }
    }

    pub(crate) fn node<'a, 'y>(&'a self, yaml: &'a Yaml<'y>) -> Node<'a, 'y> {
        Node {
            yaml,
            path: &self.path,
        }
    }
}

impl<'a, 'y> Node<'a, 'y> {
    pub(crate) fn error(&self, message: impl Into<String>) -> YamlError {
        YamlError::Shape {
            key: self.path.to_owned(),
            message: message.into(),
        }
    }

    pub(crate) fn yaml(&self) -> &'a Yaml<'y> {
        self.yaml
    }

    /// The path of the child `key`.
    pub(crate) fn child_path(&self, key: &str) -> At {
        At {
            path: if self.path.is_empty() {
                key.to_owned()
            } else {
                format!("{}.{key}", self.path)
            },
        }
    }

    /// The path of the `i`th item.
    pub(crate) fn item_path(&self, i: usize) -> At {
        At {
            path: format!("{}[{i}]", self.path),
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self.yaml, Yaml::Value(Scalar::Null))
    }

    /// The value of `key` when `self` is a mapping that has it (null values count as absent).
    pub(crate) fn get(&self, key: &str) -> Option<&'a Yaml<'y>> {
        match self.yaml {
            Yaml::Mapping(map) => map
                .iter()
                .find(|(k, _)| matches!(k, Yaml::Value(Scalar::String(s)) if s == key))
                .map(|(_, v)| v)
                .filter(|v| !matches!(v, Yaml::Value(Scalar::Null))),
            _ => None,
        }
    }

    pub(crate) fn ensure_mapping(&self) -> Result<(), YamlError> {
        match self.yaml {
            Yaml::Mapping(_) => Ok(()),
            other => Err(self.error(format!("expected a mapping, found {}", kind(other)))),
        }
    }

    /// The entries of a mapping, keys as text.
    pub(crate) fn entries(&self) -> Result<Vec<(String, &'a Yaml<'y>)>, YamlError> {
        match self.yaml {
            Yaml::Mapping(map) => map
                .iter()
                .map(|(k, v)| {
                    Ok((
                        scalar_text(k).ok_or_else(|| self.error("a key that is not a scalar"))?,
                        v,
                    ))
                })
                .collect(),
            other => Err(self.error(format!("expected a mapping, found {}", kind(other)))),
        }
    }

    pub(crate) fn sequence(&self) -> Result<&'a [Yaml<'y>], YamlError> {
        match self.yaml {
            Yaml::Sequence(items) => Ok(items),
            other => Err(self.error(format!("expected a list, found {}", kind(other)))),
        }
    }

    pub(crate) fn u64(&self) -> Result<u64, YamlError> {
        match self.yaml {
            Yaml::Value(Scalar::Integer(i)) => {
                u64::try_from(*i).map_err(|_| self.error(format!("{i} is negative")))
            }
            // Quoted numbers, and integers beyond i64 (which the parser leaves as text).
            Yaml::Value(Scalar::String(s)) => s
                .trim()
                .parse()
                .map_err(|_| self.error(format!("expected an unsigned integer, found {s:?}"))),
            other => Err(self.error(format!(
                "expected an unsigned integer, found {}",
                kind(other)
            ))),
        }
    }

    pub(crate) fn bool(&self) -> Result<bool, YamlError> {
        match self.yaml {
            Yaml::Value(Scalar::Boolean(b)) => Ok(*b),
            Yaml::Value(Scalar::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Yaml::Value(Scalar::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(self.error(format!("expected true or false, found {}", kind(other)))),
        }
    }

    /// Any scalar as text (`version: 9` and `version: "9"` alike; null is "").
    pub(crate) fn text(&self) -> Result<String, YamlError> {
        if self.is_null() {
            return Ok(String::new());
        }
        scalar_text(self.yaml)
            .ok_or_else(|| self.error(format!("expected text, found {}", kind(self.yaml))))
    }
}

fn scalar_text(yaml: &Yaml<'_>) -> Option<String> {
    match yaml {
        Yaml::Value(Scalar::String(s)) => Some(s.to_string()),
        Yaml::Value(Scalar::Integer(i)) => Some(i.to_string()),
        Yaml::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        Yaml::Value(Scalar::Null) => Some(String::new()),
        Yaml::Representation(s, _, _) => Some(s.to_string()),
        _ => None,
    }
}

fn kind(yaml: &Yaml<'_>) -> &'static str {
    match yaml {
        Yaml::Value(Scalar::Null) => "null",
        Yaml::Value(Scalar::Boolean(_)) => "a boolean",
        Yaml::Value(Scalar::Integer(_)) => "an integer",
        Yaml::Value(Scalar::FloatingPoint(_)) => "a number",
        Yaml::Value(Scalar::String(_)) | Yaml::Representation(..) => "text",
        Yaml::Sequence(_) => "a list",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(..) => "a tagged value",
        Yaml::Alias(_) | Yaml::BadValue => "an unresolved value",
    }
}

/// Block-style YAML text, built line by line with two-space indentation (yaml-cpp's layout:
/// sequence items indented under their key, `- ` then the item's first key).
#[derive(Debug, Default)]
pub(crate) struct Emitter {
    out: String,
}

impl Emitter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// `key: value` at `indent` spaces (`prefix` replaces the last two spaces with `- ` for the
    /// first key of a sequence item).
    pub(crate) fn scalar(&mut self, indent: usize, item: bool, key: &str, value: &str) {
        self.key(indent, item, key);
        self.out.push(' ');
        self.out.push_str(value);
    }

    /// `key:` opening a nested block.
    pub(crate) fn key(&mut self, indent: usize, item: bool, key: &str) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        if item {
            self.out
                .extend(std::iter::repeat_n(' ', indent.saturating_sub(2)));
            self.out.push_str("- ");
        } else {
            self.out.extend(std::iter::repeat_n(' ', indent));
        }
        self.out.push_str(key);
        self.out.push(':');
    }

    /// A bare sequence item (`- value`) at `indent`.
    pub(crate) fn item(&mut self, indent: usize, value: &str) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.out.push_str("- ");
        self.out.push_str(value);
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string, double-quoted
/// with escapes otherwise (always for `""`, numbers, booleans, nulls and anything with
/// special characters).
pub(crate) fn quote(s: &str) -> String {
    if is_plain_safe(s) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return false;
    }
    // Anything that could read as a number stays quoted.
    if first.is_ascii_digit() || matches!(first, '+' | '-' | '.') {
        return false;
    }
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn quoting_keeps_every_string_what_it_was() {
        for s in [
            "",
            "/chatter",
            "std_msgs/msg/String",
            "9",
            "true",
            "~",
            "a: b",
            "x\"y\\z",
            "line\nbreak",
            "-",
            "RIHS01_00ff",
            "ünïcode",
            "\u{1}",
        ] {
            let text = format!("k: {}", quote(s));
            let doc = parse(&text).unwrap();
            let at = At::root();
            let root = at.node(&doc);
            let value = root
                .get("k")
                .map(|v| at.node(v).text().unwrap())
                .unwrap_or_default();
            assert_eq!(value, s, "{text}");
        }
        assert_eq!(quote("/chatter"), "/chatter");
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn syntax_errors_say_where() {
        let err = parse("a: [1, 2\nb: 3").unwrap_err();
        assert!(matches!(err, YamlError::Syntax { line: 2, .. }), "{err:?}");
    }
}
