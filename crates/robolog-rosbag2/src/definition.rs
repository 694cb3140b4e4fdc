//! Message definitions as a bag stores them, or the reason it has none.

/// The definition of a topic's type, as the bag stores it.
///
/// Containers do not parse definitions: the facade (or a user of `robolog-msg`) does, and for
/// [`Definition::NotStored`] and [`Definition::NotFound`] looks the type up elsewhere (the
/// bundled interface store of the bag's ROS distro).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Definition {
    /// The definition the recorder stored: sqlite `message_definitions` (schema 4) or the MCAP
    /// schema.
    Stored {
        /// `ros2msg` (a `.msg` text with `MSG:` sections for the types it uses) or `ros2idl`.
        encoding: String,
        /// The text.
        text: String,
    },
    /// The storage has a place for it, but the recorder did not find the definition (encoding
    /// `""` or `unknown`, empty text).
    NotFound {
        /// The encoding stored (`""` or `unknown`).
        encoding: String,
    },
    /// The storage keeps no definitions (sqlite schema 1–3: Humble and older).
    NotStored,
}

impl Definition {
    /// From a stored encoding and text: empty text or an unknown encoding is [`Definition::NotFound`].
    pub(crate) fn from_stored(encoding: &str, text: String) -> Self {
        if text.is_empty() || !matches!(encoding, "ros2msg" | "ros2idl") {
            Definition::NotFound {
                encoding: encoding.to_owned(),
            }
        } else {
            Definition::Stored {
                encoding: encoding.to_owned(),
                text,
            }
        }
    }

    /// The stored encoding and text, when there is a definition.
    pub fn stored(&self) -> Option<(&str, &str)> {
        match self {
            Definition::Stored { encoding, text } => Some((encoding, text)),
            _ => None,
        }
    }
}

/// The type a definition is stored under for a topic type: a service event topic
/// (`pkg/srv/Foo_Event`) has its service's definition (`pkg/srv/Foo`).
pub(crate) fn definition_key(type_name: &str) -> Option<&str> {
    type_name
        .strip_suffix("_Event")
        .filter(|base| base.contains("/srv/"))
}
