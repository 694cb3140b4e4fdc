//! The crate's error type and the non-fatal warnings that parsing collects.

use std::fmt;
use std::path::PathBuf;

use crate::name::TypeName;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A definition text does not follow the grammar of its dialect.
    #[error("{0}")]
    Syntax(Box<SyntaxError>),
    /// A type name such as `pkg/Type` is malformed.
    #[error("invalid type name `{text}`: {reason}")]
    InvalidTypeName {
        /// The name as given.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A type is referenced but no definition for it is known.
    #[error("{}", missing_type_message(.missing, .needed_by.as_ref()))]
    MissingType {
        /// The type that has no definition.
        missing: TypeName,
        /// The type whose field refers to it (`None` when it was asked for directly).
        needed_by: Option<TypeName>,
    },
    /// A definition for the type was present (e.g. a bundle section) but could not be parsed.
    #[error("type {name} is defined but its definition could not be parsed: {error}")]
    UnparsableType {
        /// The type.
        name: TypeName,
        /// Why its definition was rejected.
        error: Box<SyntaxError>,
    },
    /// A type contains itself, directly or through other types, so it has no finite layout.
    #[error("type {} contains itself: {}", .cycle[0], join_names(.cycle))]
    RecursiveType {
        /// The chain of types, starting and ending with the same type.
        cycle: Vec<TypeName>,
    },
    /// The ROS 1 md5sum was asked for a type that was parsed with the ROS 2 rules.
    #[error("the md5sum is a ROS 1 notion, but {name} was parsed as a ROS 2 definition")]
    NotRos1 {
        /// The ROS 2 type.
        name: TypeName,
    },
    /// No service of that name is known.
    #[error("service {name} is not defined")]
    MissingService {
        /// The service type.
        name: TypeName,
    },
    /// A schema encoding this crate does not read (see [`crate::Registry::from_ros2_schema`]).
    #[error("schema encoding `{encoding}` is not a ROS 2 definition encoding (ros2msg, ros2idl)")]
    UnsupportedSchemaEncoding {
        /// The encoding as given.
        encoding: String,
    },
    /// A type hash (RIHS01) was asked for a type that was parsed with the ROS 1 rules.
    #[error("the RIHS01 type hash is a ROS 2 notion, but {name} was parsed as a ROS 1 definition")]
    NotRos2 {
        /// The ROS 1 type.
        name: TypeName,
    },
    /// No action of that name is known.
    #[error("action {name} is not defined")]
    MissingAction {
        /// The action type.
        name: TypeName,
    },
    /// A ROS 2 distro name that is not one of [`crate::Distro::ALL`].
    #[error("unknown ROS 2 distro `{name}` (bundled: humble, iron, jazzy, kilted)")]
    UnknownDistro {
        /// The name as given.
        name: String,
    },
    /// Reading a file or directory failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A definition file could not be loaded (the inner error says why).
    #[error("{}: {source}", .path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The error in it.
        source: Box<Error>,
    },
}

fn missing_type_message(missing: &TypeName, needed_by: Option<&TypeName>) -> String {
    match needed_by {
        Some(parent) => format!("type {missing} (used by {parent}) is not defined"),
        None => format!("type {missing} is not defined"),
    }
}

fn join_names(names: &[TypeName]) -> String {
    names
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" -> ")
}

impl From<SyntaxError> for Error {
    fn from(error: SyntaxError) -> Self {
        Error::Syntax(Box::new(error))
    }
}

/// Where and why a definition text was rejected.
///
/// Lines and columns are 1-based; columns count characters (Unicode scalar values). Inside a
/// bundle, lines count from the start of the whole bundle text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The type being parsed (`pkg/Type`, or `pkg/Srv` for a whole service file).
    pub type_name: String,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column of the offending text.
    pub column: usize,
    /// What the grammar expected there.
    pub expected: String,
    /// The offending text (may be empty when something is missing).
    pub found: String,
    /// The whole line, as written.
    pub line_text: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} line {}, column {}: expected {}, found `{}` (line: `{}`)",
            self.type_name,
            self.line,
            self.column,
            self.expected,
            self.found,
            self.line_text.trim_end_matches(['\r', '\n'])
        )
    }
}

impl std::error::Error for SyntaxError {}

/// Something accepted for compatibility but worth telling the user about.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// A ROS 1 constant whose name contains whitespace or is empty. genmsg takes a `string`
    /// constant's name from the first space of the raw line, so an indented `  string S=x` gets
    /// the name `string S`; it is kept because the md5sum depends on it.
    OddConstantName {
        /// The type that declares the constant.
        type_name: TypeName,
        /// 1-based line.
        line: usize,
        /// The name as genmsg computes it.
        name: String,
    },
    /// A ROS 1 `Header[]` (or `Header[N]`) field: genmsg maps only a bare `Header` to
    /// `std_msgs/Header`, so the array refers to the package's own `Header` type.
    PackageHeaderArray {
        /// The type that declares the field.
        type_name: TypeName,
        /// 1-based line.
        line: usize,
    },
    /// A bundle contained two sections for the same type; the first one is used.
    DuplicateSection {
        /// The type.
        name: TypeName,
        /// 1-based line of the ignored `MSG:` line.
        line: usize,
    },
    /// A bundle section header whose type name is malformed; the section is ignored.
    InvalidSectionName {
        /// 1-based line of the `MSG:` line.
        line: usize,
        /// The name as written.
        text: String,
    },
    /// A dependency section of a bundle could not be parsed; the type is unusable but the rest
    /// of the bundle is.
    UnparsableSection {
        /// The section's type.
        name: TypeName,
        /// Why it was rejected.
        error: Box<SyntaxError>,
    },
    /// The bundle had no line breaks but literal `\n` sequences (a known publisher bug); they
    /// were read as line breaks.
    EscapedNewlines,
    /// A type was defined twice (for example in two package directories); the first is kept.
    DuplicateType {
        /// The type.
        name: TypeName,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::OddConstantName {
                type_name,
                line,
                name,
            } => write!(
                f,
                "{type_name} line {line}: constant name `{name}` is empty or contains \
                 whitespace (kept as genmsg computes it, for md5 compatibility)"
            ),
            Warning::PackageHeaderArray { type_name, line } => write!(
                f,
                "{type_name} line {line}: `Header[]` refers to {}/Header, not std_msgs/Header \
                 (genmsg only maps a bare `Header`)",
                type_name.package()
            ),
            Warning::DuplicateSection { name, line } => write!(
                f,
                "line {line}: second definition of {name} in the bundle ignored"
            ),
            Warning::InvalidSectionName { line, text } => write!(
                f,
                "line {line}: bundle section `MSG: {text}` has an invalid type name; ignored"
            ),
            Warning::UnparsableSection { name, error } => {
                write!(f, "bundle section {name} could not be parsed: {error}")
            }
            Warning::EscapedNewlines => write!(
                f,
                "the definition contained literal `\\n` sequences instead of line breaks"
            ),
            Warning::DuplicateType { name } => {
                write!(
                    f,
                    "{name} is defined more than once; the first definition is used"
                )
            }
        }
    }
}
