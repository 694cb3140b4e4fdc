//! ROS 2 `.msg`, `.srv` and `.action` texts, parsed as rosidl (`rosidl_adapter/parser.py`)
//! parses them.
//!
//! Differences from ROS 1 that matter: TABs become spaces; a comment starts at the first `#`
//! even inside quotes; a line is a constant iff the text after the type contains `=`; fields
//! may have defaults; bounded strings and sequences exist; names follow strict patterns;
//! `Header` is not special; `time` and `duration` are the messages `builtin_interfaces/Time` and
//! `builtin_interfaces/Duration`; string constants lose one level of quotes; integers may be
//! written `0x`/`0o`/`0b`.

use std::collections::HashSet;

use crate::error::SyntaxError;
use crate::model::{
    ActionDefinition, ArrayKind, Constant, DefaultValue, Dialect, ElementType, Field, FieldType,
    MessageDefinition, PrimitiveType, ServiceDefinition, Value,
};
use crate::name::{TypeName, is_ros2_constant_name, is_ros2_message_name, is_ros2_snake_name};
use crate::python_literal::{self, IntegerError};
use crate::python_text::{lstrip, rstrip, splitlines, strip};
use crate::source_line::SourceLine;

const FIELD_NAME_RULE: &str =
    "a field name: lower case letters, digits and single `_`, not ending in `_`";
const PACKAGE_NAME_RULE: &str =
    "a package name: lower case letters, digits and single `_`, not ending in `_`";
const MESSAGE_NAME_RULE: &str = "a message name: an upper case letter, then letters and digits";
const CONSTANT_NAME_RULE: &str =
    "a constant name: upper case letters, digits and single `_`, not ending in `_`";

/// Parses a `.msg` text. `first_line` numbers the first line (for texts inside bundles or
/// services).
pub(crate) fn parse_message(
    name: &TypeName,
    text: &str,
    first_line: usize,
) -> Result<MessageDefinition, SyntaxError> {
    let type_name = name.to_string();
    // rosidl replaces TABs before anything else; a TAB is one character like the space, so
    // columns stay right.
    let replaced = text.replace('\t', " ");
    let lines: Vec<SourceLine<'_>> = splitlines(&replaced)
        .into_iter()
        .enumerate()
        .map(|(index, text)| SourceLine {
            number: first_line + index,
            text,
        })
        .collect();
    let mut definition = MessageDefinition {
        name: name.clone(),
        dialect: Dialect::Ros2,
        constants: Vec::new(),
        fields: Vec::new(),
        source: text.to_owned(),
        warnings: Vec::new(),
    };
    let mut field_names = HashSet::new();
    let mut constant_names = HashSet::new();
    for line in &lines {
        let mut content = rstrip(line.text);
        if content.is_empty() {
            continue;
        }
        if let Some(hash) = content.find('#') {
            content = content.get(..hash).unwrap_or("");
            // An indented comment, or a comment line.
            content = rstrip(content);
            if content.is_empty() {
                continue;
            }
        }
        if content.starts_with("@optional") {
            return Err(line.error(
                &type_name,
                content,
                "a field or constant (`@optional` members are not supported)",
            ));
        }
        let (type_token, rest) = content.split_once(' ').unwrap_or((content, ""));
        if type_token.is_empty() {
            let at = lstrip(content);
            return Err(line.error(
                &type_name,
                at,
                "a type at the start of the line (rosidl does not accept indented declarations)",
            ));
        }
        let rest = lstrip(rest);
        if rest.is_empty() {
            return Err(line.error_at_end(&type_name, "a name after the type"));
        }
        if let Some(equals) = rest.find('=') {
            let constant_name = rstrip(rest.get(..equals).unwrap_or(""));
            let value = lstrip(rest.get(equals + 1..).unwrap_or(""));
            let constant = parse_constant(&type_name, line, type_token, constant_name, value)?;
            if !constant_names.insert(constant.name.clone()) {
                return Err(line.error(
                    &type_name,
                    constant_name,
                    "a constant name not already used in this message",
                ));
            }
            definition.constants.push(constant);
        } else {
            let (field_name, default) = rest.split_once(' ').unwrap_or((rest, ""));
            let default = lstrip(default);
            let field = parse_field(name, &type_name, line, type_token, field_name, default)?;
            if !field_names.insert(field.name.clone()) {
                return Err(line.error(
                    &type_name,
                    field_name,
                    "a field name not already used in this message",
                ));
            }
            definition.fields.push(field);
        }
    }
    Ok(definition)
}

fn parse_constant(
    type_name: &str,
    line: &SourceLine<'_>,
    type_token: &str,
    name: &str,
    value: &str,
) -> Result<Constant, SyntaxError> {
    let Some(ty) = PrimitiveType::from_name(type_token)
        .filter(|t| !matches!(t, PrimitiveType::Time | PrimitiveType::Duration))
    else {
        return Err(line.error(
            type_name,
            type_token,
            "a constant type: a primitive type other than time/duration, not an array or bounded \
             string",
        ));
    };
    if !is_ros2_constant_name(name) {
        let expected = if matches!(ty, PrimitiveType::String | PrimitiveType::WString)
            && name.contains([' ', '"', '\''])
        {
            "a constant name. rosidl reads every line with `=` after the type as a constant, so \
             a string default cannot contain `=`"
                .to_owned()
        } else {
            CONSTANT_NAME_RULE.to_owned()
        };
        return Err(line.error(type_name, name, expected));
    }
    let converted =
        parse_scalar(ty, None, value).map_err(|expected| line.error(type_name, value, expected))?;
    Ok(Constant {
        ty,
        name: name.to_owned(),
        value: converted,
        value_text: value.to_owned(),
    })
}

fn parse_field(
    name: &TypeName,
    type_name: &str,
    line: &SourceLine<'_>,
    type_token: &str,
    field_name: &str,
    default: &str,
) -> Result<Field, SyntaxError> {
    let (ty, type_text) = parse_type(name, type_name, line, type_token)?;
    if !is_ros2_snake_name(field_name) {
        return Err(line.error(type_name, field_name, FIELD_NAME_RULE));
    }
    let default = if default.is_empty() {
        None
    } else {
        let value = parse_default(&ty, default)
            .map_err(|expected| line.error(type_name, default, expected))?;
        Some(DefaultValue {
            value,
            text: default.to_owned(),
        })
    };
    Ok(Field {
        name: field_name.to_owned(),
        ty,
        type_text,
        default,
    })
}

/// rosidl `Type`: the array suffix is found with the last `[`; then a primitive, a bounded
/// string or a message name (`Type` in the current package, or `pkg/Type`).
fn parse_type(
    name: &TypeName,
    type_name: &str,
    line: &SourceLine<'_>,
    token: &str,
) -> Result<(FieldType, String), SyntaxError> {
    let (base, array) = match token.strip_suffix(']') {
        None => (token, ArrayKind::Scalar),
        Some(without_bracket) => {
            let Some(open) = without_bracket.rfind('[') else {
                return Err(line.error(type_name, token, "a `[` before the final `]`"));
            };
            let size = without_bracket.get(open + 1..).unwrap_or("");
            let array = if size.is_empty() {
                ArrayKind::Variable
            } else {
                let (bounded, digits) = match size.strip_prefix("<=") {
                    Some(digits) => (true, digits),
                    None => (false, size),
                };
                let Some(n) = positive_size(digits) else {
                    return Err(line.error(
                        type_name,
                        size,
                        "an array size: an integer > 0, optionally after `<=`",
                    ));
                };
                if bounded {
                    ArrayKind::Bounded(n)
                } else {
                    ArrayKind::Fixed(n)
                }
            };
            (without_bracket.get(..open).unwrap_or(""), array)
        }
    };
    // `time` and `duration` are a compatibility spelling of the builtin_interfaces messages
    // (ROS 2 has no such primitives); the type text keeps the spelling.
    let builtin = match base {
        "time" => Some("Time"),
        "duration" => Some("Duration"),
        _ => None,
    };
    if let Some(builtin) = builtin {
        let resolved = TypeName::new("builtin_interfaces", builtin)
            .map_err(|_| line.error(type_name, base, MESSAGE_NAME_RULE))?;
        let ty = FieldType {
            element: ElementType::Message(resolved),
            array,
        };
        return Ok((ty, token.to_owned()));
    }
    if let Some(primitive) = PrimitiveType::from_name(base) {
        let ty = FieldType {
            element: ElementType::Primitive(primitive),
            array,
        };
        return Ok((ty, token.to_owned()));
    }
    for (prefix, wide) in [("string<=", false), ("wstring<=", true)] {
        if let Some(bound) = base.strip_prefix(prefix) {
            let Some(max_len) = positive_size(bound) else {
                return Err(line.error(type_name, bound, "a string bound: an integer > 0"));
            };
            let ty = FieldType {
                element: ElementType::BoundedString { wide, max_len },
                array,
            };
            return Ok((ty, token.to_owned()));
        }
    }
    let parts: Vec<&str> = base.split('/').collect();
    let (package, short, relative) = match parts.as_slice() {
        [short] => (name.package(), *short, true),
        [package, short] => (*package, *short, false),
        _ => {
            return Err(line.error(
                type_name,
                base,
                "a primitive type, `Type` or `pkg/Type` (`pkg/msg/Type` is not allowed inside a \
                 .msg)",
            ));
        }
    };
    if !is_ros2_snake_name(package) {
        if relative {
            let expected = format!(
                "a type in a package with a valid ROS 2 name, but `{package}` is not one ({PACKAGE_NAME_RULE})"
            );
            return Err(line.error(type_name, base, expected));
        }
        return Err(line.error(type_name, parts[0], PACKAGE_NAME_RULE));
    }
    if !is_ros2_message_name(short) {
        let at = parts.last().copied().unwrap_or(base);
        return Err(line.error(type_name, at, MESSAGE_NAME_RULE));
    }
    let resolved = TypeName::new(package, short)
        .map_err(|_| line.error(type_name, base, MESSAGE_NAME_RULE))?;
    let type_text = if relative {
        format!("{package}/{token}")
    } else {
        token.to_owned()
    };
    let ty = FieldType {
        element: ElementType::Message(resolved),
        array,
    };
    Ok((ty, type_text))
}

/// Python `int(text)` that must be > 0 (array sizes and string bounds).
fn positive_size(text: &str) -> Option<u64> {
    python_literal::int_decimal(text)
        .ok()
        .filter(|&n| n > 0)
        .and_then(|n| u64::try_from(n).ok())
}

/// rosidl `parse_value_string`: a scalar default, or `[a, b, …]` for an array of primitives.
fn parse_default(ty: &FieldType, text: &str) -> Result<Value, String> {
    let (primitive, string_bound) = match &ty.element {
        ElementType::Primitive(p) => (*p, None),
        ElementType::BoundedString { wide, max_len } => (
            if *wide {
                PrimitiveType::WString
            } else {
                PrimitiveType::String
            },
            Some(*max_len),
        ),
        ElementType::Message(_) => {
            return Err("no default (defaults exist only for primitive types)".to_owned());
        }
    };
    if ty.array == ArrayKind::Scalar {
        return parse_scalar(primitive, string_bound, text);
    }
    let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) else {
        return Err("an array default that starts with `[` and ends with `]`".to_owned());
    };
    let elements: Vec<String> =
        if matches!(primitive, PrimitiveType::String | PrimitiveType::WString) {
            split_string_elements(inner)?
        } else if inner.is_empty() {
            Vec::new()
        } else {
            inner.split(',').map(str::to_owned).collect()
        };
    let count = u64::try_from(elements.len()).unwrap_or(u64::MAX);
    match ty.array {
        ArrayKind::Fixed(n) if count != n => {
            return Err(format!(
                "an array default with exactly {n} elements, not {count}"
            ));
        }
        ArrayKind::Bounded(n) if count > n => {
            return Err(format!(
                "an array default with at most {n} elements, not {count}"
            ));
        }
        _ => {}
    }
    elements
        .iter()
        .enumerate()
        .map(|(index, element)| {
            parse_scalar(primitive, string_bound, strip(element))
                .map_err(|expected| format!("element {index}: {expected}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// Splits the inside of a string-array default at commas outside quotes; quoted elements lose
/// their quotes and the escapes of their quote character (rosidl
/// `parse_string_array_value_string`).
fn split_string_elements(inner: &str) -> Result<Vec<String>, String> {
    let mut elements = Vec::new();
    let mut rest = inner.trim_start_matches(' ');
    while !rest.is_empty() {
        if rest.starts_with(',') {
            return Err(format!(
                "a string element, not `,` at the start of `{rest}`"
            ));
        }
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        if let Some(quote) = quote {
            let body = rest.get(1..).unwrap_or("");
            let mut escaped = false;
            let mut end = None;
            for (index, c) in body.char_indices() {
                if c == quote && !escaped {
                    end = Some(index);
                    break;
                }
                escaped = c == '\\' && !escaped;
            }
            let Some(end) = end else {
                return Err(format!("a closing {quote} in `{rest}`"));
            };
            let value = body.get(..end).unwrap_or("");
            elements.push(value.replace(&format!("\\{quote}"), &quote.to_string()));
            rest = body.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            elements.push(rest.get(..end).unwrap_or("").to_owned());
            rest = rest.get(end..).unwrap_or("");
        }
        rest = rest.trim_start_matches(' ');
        if let Some(after_comma) = rest.strip_prefix(',') {
            rest = after_comma.trim_start_matches(' ');
        } else if !rest.is_empty() {
            return Err(format!("`,` between string elements, found `{rest}`"));
        }
    }
    Ok(elements)
}

/// rosidl `parse_primitive_value_string`. The error is the "expected …" text.
fn parse_scalar(ty: PrimitiveType, string_bound: Option<u64>, text: &str) -> Result<Value, String> {
    match ty {
        PrimitiveType::Bool => match text.to_lowercase().as_str() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err("a bool value: true, false, 1 or 0 (any case)".to_owned()),
        },
        PrimitiveType::Float32 | PrimitiveType::Float64 => python_literal::float(text)
            .map(Value::Float)
            .ok_or_else(|| "a floating-point number".to_owned()),
        PrimitiveType::String | PrimitiveType::WString => {
            parse_string_value(text, string_bound).map(Value::String)
        }
        PrimitiveType::Time | PrimitiveType::Duration => {
            Err(format!("no value: {ty} has no constants or defaults"))
        }
        _ => {
            let (lower, upper, signed) = ros2_integer_range(ty);
            let expected = || format!("an integer from {lower} to {upper} for {ty}");
            let number = match python_literal::int_decimal(text) {
                Ok(n) => n,
                Err(IntegerError::TooLarge) => return Err(expected()),
                Err(IntegerError::Syntax) => {
                    python_literal::int_any_base(text).map_err(|_| expected())?
                }
            };
            if number < lower || number > upper {
                return Err(expected());
            }
            Ok(Value::from_integer(signed, number))
        }
    }
}

fn ros2_integer_range(ty: PrimitiveType) -> (i128, i128, bool) {
    match ty {
        PrimitiveType::Int8 => (-128, 127, true),
        PrimitiveType::Int16 => (i128::from(i16::MIN), i128::from(i16::MAX), true),
        PrimitiveType::Int32 => (i128::from(i32::MIN), i128::from(i32::MAX), true),
        PrimitiveType::Int64 => (i128::from(i64::MIN), i128::from(i64::MAX), true),
        PrimitiveType::UInt16 => (0, i128::from(u16::MAX), false),
        PrimitiveType::UInt32 => (0, i128::from(u32::MAX), false),
        PrimitiveType::UInt64 => (0, i128::from(u64::MAX), false),
        // uint8, and byte/char which rosidl treats as uint8.
        _ => (0, 255, false),
    }
}

/// One level of matching quotes is removed; inside, the same quote must be escaped (`\"`).
fn parse_string_value(text: &str, bound: Option<u64>) -> Result<String, String> {
    let mut value = text.to_owned();
    for quote in ['"', '\''] {
        if text.starts_with(quote) && text.ends_with(quote) {
            // Python's text[1:-1]: empty when the text is the quote character alone.
            let inner = text
                .get(1..text.len().saturating_sub(1).max(1))
                .unwrap_or("");
            let mut previous = None;
            for c in inner.chars() {
                if c == quote && previous != Some('\\') {
                    return Err(format!("a string with inner {quote} escaped as \\{quote}"));
                }
                previous = Some(c);
            }
            value = inner.replace(&format!("\\{quote}"), &quote.to_string());
            break;
        }
    }
    if let Some(bound) = bound {
        let length = u64::try_from(value.chars().count()).unwrap_or(u64::MAX);
        if length > bound {
            return Err(format!("a string of at most {bound} characters"));
        }
    }
    Ok(value)
}

/// The lines of a `.srv`/`.action` file and the indices of its `---` lines (rosidl compares
/// whole lines, so `---x` or ` ---` are not separators).
fn separated(text: &str) -> (Vec<&str>, Vec<usize>) {
    let lines = splitlines(text);
    let separators = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| **line == "---")
        .map(|(index, _)| index)
        .collect();
    (lines, separators)
}

/// Points at the first separator beyond the `wanted` ones, or at the last line when some are
/// missing.
fn separator_error(
    name: &TypeName,
    lines: &[&str],
    separators: &[usize],
    first_line: usize,
    wanted: usize,
    expected: &str,
) -> SyntaxError {
    let index = separators
        .get(wanted)
        .copied()
        .unwrap_or(lines.len().saturating_sub(1));
    let line = SourceLine {
        number: first_line + index,
        text: lines.get(index).copied().unwrap_or(""),
    };
    line.error(
        &name.to_string(),
        line.text,
        format!("{expected}; found {} `---` lines", separators.len()),
    )
}

fn section_text(lines: &[&str]) -> String {
    lines.join("\n")
}

/// Parses a `.srv` text: exactly one line equal to `---`.
pub(crate) fn parse_service(
    name: &TypeName,
    text: &str,
    first_line: usize,
) -> Result<ServiceDefinition, SyntaxError> {
    let (lines, separators) = separated(text);
    let [separator] = separators.as_slice() else {
        return Err(separator_error(
            name,
            &lines,
            &separators,
            first_line,
            1,
            "exactly one `---` line between request and response",
        ));
    };
    let request_text = section_text(lines.get(..*separator).unwrap_or(&[]));
    let response_text = section_text(lines.get(separator + 1..).unwrap_or(&[]));
    Ok(ServiceDefinition {
        name: name.clone(),
        dialect: Dialect::Ros2,
        request: parse_message(
            &name.sibling(format!("{}_Request", name.name())),
            &request_text,
            first_line,
        )?,
        response: parse_message(
            &name.sibling(format!("{}_Response", name.name())),
            &response_text,
            first_line + separator + 1,
        )?,
        source: text.to_owned(),
    })
}

/// Parses an `.action` text (exactly two `---` lines) and synthesises the types rosidl adds:
/// `A_SendGoal`, `A_GetResult` (services) and `A_FeedbackMessage`.
pub(crate) fn parse_action(
    name: &TypeName,
    text: &str,
    first_line: usize,
) -> Result<ActionDefinition, SyntaxError> {
    let (lines, separators) = separated(text);
    let [first, second] = separators.as_slice() else {
        return Err(separator_error(
            name,
            &lines,
            &separators,
            first_line,
            2,
            "exactly two `---` lines (goal, result, feedback)",
        ));
    };
    let action = name.name();
    let package = name.package();
    let part = |suffix: &str, range: std::ops::Range<usize>, start: usize| {
        parse_message(
            &name.sibling(format!("{action}_{suffix}")),
            &section_text(lines.get(range).unwrap_or(&[])),
            first_line + start,
        )
    };
    let goal = part("Goal", 0..*first, 0)?;
    let result = part("Result", first + 1..*second, first + 1)?;
    let feedback = part("Feedback", second + 1..lines.len(), second + 1)?;
    let synthetic = |suffix: &str, text: String| {
        parse_message(&name.sibling(format!("{action}_{suffix}")), &text, 1)
    };
    let synthetic_service = |suffix: &str, request: String, response: String| {
        Ok::<_, SyntaxError>(ServiceDefinition {
            name: name.sibling(format!("{action}_{suffix}")),
            dialect: Dialect::Ros2,
            request: synthetic(&format!("{suffix}_Request"), request.clone())?,
            response: synthetic(&format!("{suffix}_Response"), response.clone())?,
            source: format!("{request}---\n{response}"),
        })
    };
    let derived_services = vec![
        synthetic_service(
            "SendGoal",
            format!("unique_identifier_msgs/UUID goal_id\n{package}/{action}_Goal goal\n"),
            "bool accepted\nbuiltin_interfaces/Time stamp\n".to_owned(),
        )?,
        synthetic_service(
            "GetResult",
            "unique_identifier_msgs/UUID goal_id\n".to_owned(),
            format!("int8 status\n{package}/{action}_Result result\n"),
        )?,
    ];
    let derived_messages = vec![synthetic(
        "FeedbackMessage",
        format!("unique_identifier_msgs/UUID goal_id\n{package}/{action}_Feedback feedback\n"),
    )?];
    Ok(ActionDefinition {
        name: name.clone(),
        dialect: Dialect::Ros2,
        goal,
        result,
        feedback,
        derived_messages,
        derived_services,
        source: text.to_owned(),
    })
}
