//! The IDL that rosidl generates (`ros2idl` schema sections).

use crate::error::Error;
use crate::model::MessageDefinition;
use crate::name::TypeName;
use crate::source_line::SourceLine;

/// Parses one IDL file into the messages its structs define.
pub(crate) fn parse_idl(
    name: &TypeName,
    _text: &str,
    first_line: usize,
) -> Result<Vec<MessageDefinition>, Error> {
    let line = SourceLine {
        number: first_line,
        text: "",
    };
    Err(line
        .error(
            &name.to_string(),
            "",
            "a .msg section (IDL sections are not read yet)",
        )
        .into())
}
