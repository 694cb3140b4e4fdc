//! Field paths as users write them (`header.stamp.sec`, `pose.position.x`, `ranges[3]`): the
//! syntax alone, shared by the decoders of both wire formats, which check the steps against
//! their compiled types.

/// One step of a field path, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathToken<'t> {
    /// A field name.
    Field(&'t str),
    /// An array index (`[3]`).
    Index(usize),
}

/// A field path that is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path `{path}`: {reason}")]
pub struct FieldPathError {
    /// The path as given.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Splits `path` into field names and indices: names are separated by `.`, an index `[n]`
/// follows a name or another index, and a path starts with a name. Names follow the rule both
/// dialects share (an ASCII letter or `_`, then letters, digits or `_`).
///
/// ```
/// use robolog_msg::{PathToken, parse_field_path};
/// assert_eq!(
///     parse_field_path("points[2].x")?,
///     [PathToken::Field("points"), PathToken::Index(2), PathToken::Field("x")]
/// );
/// assert!(parse_field_path("points.[2]").is_err());
/// # Ok::<(), robolog_msg::FieldPathError>(())
/// ```
pub fn parse_field_path(path: &str) -> Result<Vec<PathToken<'_>>, FieldPathError> {
    let invalid = |reason: String| FieldPathError {
        path: path.to_owned(),
        reason,
    };
    let mut tokens = Vec::new();
    let mut rest = path;
    let mut expect_name = true;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let close = after
                .find(']')
                .ok_or_else(|| invalid("`[` without `]`".to_owned()))?;
            let digits = &after[..close];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(format!("`[{digits}]` is not an array index")));
            }
            let index = digits
                .parse::<usize>()
                .map_err(|_| invalid(format!("index {digits} is too large")))?;
            if tokens.is_empty() {
                return Err(invalid("a path starts with a field name".to_owned()));
            }
            tokens.push(PathToken::Index(index));
            rest = &after[close + 1..];
            expect_name = false;
            continue;
        }
        if !expect_name {
            rest = rest
                .strip_prefix('.')
                .ok_or_else(|| invalid("expected `.` or `[` between steps".to_owned()))?;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(invalid(format!("`{name}` is not a field name")));
        }
        tokens.push(PathToken::Field(name));
        rest = &rest[end..];
        expect_name = false;
    }
    if tokens.is_empty() {
        return Err(invalid("the path is empty".to_owned()));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indices() {
        assert_eq!(
            parse_field_path("a[1][2].b_2").unwrap(),
            [
                PathToken::Field("a"),
                PathToken::Index(1),
                PathToken::Index(2),
                PathToken::Field("b_2")
            ]
        );
        assert_eq!(parse_field_path("_x").unwrap(), [PathToken::Field("_x")]);
    }

    #[test]
    fn malformed_paths_say_why() {
        for (path, reason) in [
            ("", "the path is empty"),
            ("[0]", "a path starts with a field name"),
            ("a[", "`[` without `]`"),
            ("a[x]", "`[x]` is not an array index"),
            ("a[]", "`[]` is not an array index"),
            ("a..b", "`` is not a field name"),
            ("a.1b", "`1b` is not a field name"),
            ("a[0]b", "expected `.` or `[` between steps"),
            (
                "a[99999999999999999999999]",
                "index 99999999999999999999999 is too large",
            ),
        ] {
            let error = parse_field_path(path).unwrap_err();
            assert_eq!(error.reason, reason, "{path}");
            assert_eq!(error.path, path);
        }
    }
}
