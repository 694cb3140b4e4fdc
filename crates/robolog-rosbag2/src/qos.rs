//! QoS profiles: what each publisher of a topic offered while recording.
//!
//! Stored as YAML, in two spellings: integer enums inside a YAML string (metadata.yaml v4–8,
//! the sqlite `topics` table and MCAP channel metadata up to Iron) and string enums (a real
//! list in metadata.yaml v9, a YAML string elsewhere from Jazzy on). Each profile is read in
//! whichever spelling it has.

use std::fmt;

use saphyr::Yaml;

use crate::yaml::{At, Emitter, Node, YamlError, parse};

macro_rules! policy {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $num:literal, $text:literal;)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// The integer rosbag2 stores up to Iron.
            pub fn number(self) -> u8 {
                match self { $($name::$variant => $num,)* }
            }

            /// The name rosbag2 stores from Jazzy on.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            fn from_number(n: u64) -> Option<Self> {
                match n { $($num => Some($name::$variant),)* _ => None }
            }

            fn from_name(s: &str) -> Option<Self> {
                $(if s.eq_ignore_ascii_case($text) { return Some($name::$variant); })*
                None
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

policy! {
    /// Which samples the publisher keeps.
    History {
        /// The middleware's default.
        #[default]
        SystemDefault = 0, "system_default";
        /// The last `depth` samples.
        KeepLast = 1, "keep_last";
        /// Every sample.
        KeepAll = 2, "keep_all";
        /// Not known (what a recorder stores for a publisher it did not ask).
        Unknown = 3, "unknown";
    }
}

policy! {
    /// Whether delivery is guaranteed.
    Reliability {
        /// The middleware's default.
        #[default]
        SystemDefault = 0, "system_default";
        /// Retransmitted until received.
        Reliable = 1, "reliable";
        /// Sent once.
        BestEffort = 2, "best_effort";
        /// Not known.
        Unknown = 3, "unknown";
        /// Whatever the publishers offer.
        BestAvailable = 4, "best_available";
    }
}

policy! {
    /// Whether late subscribers get earlier samples.
    Durability {
        /// The middleware's default.
        #[default]
        SystemDefault = 0, "system_default";
        /// Kept for late subscribers (ROS 1 latching).
        TransientLocal = 1, "transient_local";
        /// Not kept.
        Volatile = 2, "volatile";
        /// Not known.
        Unknown = 3, "unknown";
        /// Whatever the publishers offer.
        BestAvailable = 4, "best_available";
    }
}

policy! {
    /// How the publisher shows it is alive.
    Liveliness {
        /// The middleware's default.
        #[default]
        SystemDefault = 0, "system_default";
        /// Asserted by the middleware.
        Automatic = 1, "automatic";
        /// By the node (deprecated in ROS 2).
        ManualByNode = 2, "manual_by_node";
        /// By the publisher.
        ManualByTopic = 3, "manual_by_topic";
        /// Not known.
        Unknown = 4, "unknown";
        /// Whatever the publishers offer.
        BestAvailable = 5, "best_available";
    }
}

/// A QoS duration. `{0, 0}` means "the default"; [`QosDuration::INFINITE`] means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct QosDuration {
    /// Seconds.
    pub sec: u64,
    /// Nanoseconds.
    pub nsec: u64,
}

impl QosDuration {
    /// No limit, as rosbag2 writes it (`RMW_DURATION_INFINITE`).
    pub const INFINITE: QosDuration = QosDuration {
        sec: 9_223_372_036,
        nsec: 854_775_807,
    };

    /// True for [`QosDuration::INFINITE`] and the per-middleware infinities Foxy recorded
    /// (Fast-RTPS `{2147483647, 4294967295}`, Connext `{2147483647, 2147483647}`).
    pub fn is_infinite(self) -> bool {
        self == Self::INFINITE
            || (self.sec == 2_147_483_647 && matches!(self.nsec, 4_294_967_295 | 2_147_483_647))
    }
}

/// One publisher's QoS profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct QosProfile {
    /// History policy.
    pub history: History,
    /// Queue depth for [`History::KeepLast`].
    pub depth: u64,
    /// Reliability policy.
    pub reliability: Reliability,
    /// Durability policy.
    pub durability: Durability,
    /// Deadline.
    pub deadline: QosDuration,
    /// Lifespan.
    pub lifespan: QosDuration,
    /// Liveliness policy.
    pub liveliness: Liveliness,
    /// Liveliness lease duration.
    pub liveliness_lease_duration: QosDuration,
    /// Whether the topic name skips the ROS namespace conventions.
    pub avoid_ros_namespace_conventions: bool,
}

/// How enums are spelled when QoS profiles are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnumStyle {
    /// Integers (rosbag2 up to Iron, metadata v4–8).
    Numbers,
    /// Names (Jazzy on, metadata v9).
    Names,
}

impl QosProfile {
    /// The profile a ROS 1 latched publisher maps to (rosbags-convert's choice): reliable,
    /// transient local, history and depth unknown.
    pub fn latched() -> Self {
        Self {
            history: History::Unknown,
            depth: 0,
            reliability: Reliability::Reliable,
            durability: Durability::TransientLocal,
            deadline: QosDuration::INFINITE,
            lifespan: QosDuration::INFINITE,
            liveliness: Liveliness::Automatic,
            liveliness_lease_duration: QosDuration::INFINITE,
            avoid_ros_namespace_conventions: false,
        }
    }

    fn from_node(node: Node<'_, '_>) -> Result<Self, YamlError> {
        node.ensure_mapping()?;
        let mut profile = QosProfile::default();
        for (key, value) in node.entries()? {
            let at = node.child_path(&key);
            let value = at.node(value);
            match key.as_str() {
                "history" => {
                    profile.history = policy(value, History::from_number, History::from_name)?
                }
                "depth" => profile.depth = value.u64()?,
                "reliability" => {
                    profile.reliability =
                        policy(value, Reliability::from_number, Reliability::from_name)?;
                }
                "durability" => {
                    profile.durability =
                        policy(value, Durability::from_number, Durability::from_name)?;
                }
                "deadline" => profile.deadline = duration(value)?,
                "lifespan" => profile.lifespan = duration(value)?,
                "liveliness" => {
                    profile.liveliness =
                        policy(value, Liveliness::from_number, Liveliness::from_name)?;
                }
                "liveliness_lease_duration" => profile.liveliness_lease_duration = duration(value)?,
                "avoid_ros_namespace_conventions" => {
                    profile.avoid_ros_namespace_conventions = value.bool()?;
                }
                // Keys of later versions are ignored, as rosbag2 does.
                _ => {}
            }
        }
        Ok(profile)
    }

    fn emit(&self, e: &mut Emitter, indent: usize, style: EnumStyle) {
        let text = |number: u8, name: &str| match style {
            EnumStyle::Numbers => number.to_string(),
            EnumStyle::Names => name.to_owned(),
        };
        e.scalar(
            indent,
            true,
            "history",
            &text(self.history.number(), self.history.name()),
        );
        e.scalar(indent, false, "depth", &self.depth.to_string());
        e.scalar(
            indent,
            false,
            "reliability",
            &text(self.reliability.number(), self.reliability.name()),
        );
        e.scalar(
            indent,
            false,
            "durability",
            &text(self.durability.number(), self.durability.name()),
        );
        for (key, d) in [("deadline", self.deadline), ("lifespan", self.lifespan)] {
            emit_duration(e, indent, key, d);
        }
        e.scalar(
            indent,
            false,
            "liveliness",
            &text(self.liveliness.number(), self.liveliness.name()),
        );
        emit_duration(
            e,
            indent,
            "liveliness_lease_duration",
            self.liveliness_lease_duration,
        );
        e.scalar(
            indent,
            false,
            "avoid_ros_namespace_conventions",
            if self.avoid_ros_namespace_conventions {
                "true"
            } else {
                "false"
            },
        );
    }
}

fn emit_duration(e: &mut Emitter, indent: usize, key: &str, d: QosDuration) {
    let d = if d.is_infinite() {
        QosDuration::INFINITE
    } else {
        d
    };
    e.key(indent, false, key);
    e.scalar(indent + 2, false, "sec", &d.sec.to_string());
    e.scalar(indent + 2, false, "nsec", &d.nsec.to_string());
}

fn policy<T>(
    node: Node<'_, '_>,
    from_number: fn(u64) -> Option<T>,
    from_name: fn(&str) -> Option<T>,
) -> Result<T, YamlError> {
    if let Ok(n) = node.u64() {
        return from_number(n).ok_or_else(|| node.error(format!("unknown policy number {n}")));
    }
    let text = node.text()?;
    from_name(text.trim()).ok_or_else(|| node.error(format!("unknown policy {text:?}")))
}

fn duration(node: Node<'_, '_>) -> Result<QosDuration, YamlError> {
    node.ensure_mapping()?;
    let field = |key: &str| -> Result<u64, YamlError> {
        match node.get(key) {
            Some(v) => node.child_path(key).node(v).u64(),
            None => Ok(0),
        }
    };
    let d = QosDuration {
        sec: field("sec")?,
        nsec: field("nsec")?,
    };
    Ok(if d.is_infinite() {
        QosDuration::INFINITE
    } else {
        d
    })
}

/// Profiles from a YAML node: a list (v9), or a string holding a YAML list (v4–8, sqlite, MCAP
/// channel metadata). `""`, `[]` and null are no profiles.
pub(crate) fn profiles_from_node(node: Node<'_, '_>) -> Result<Vec<QosProfile>, YamlError> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    if let Yaml::Sequence(_) = node.yaml() {
        return profiles_from_list(node);
    }
    let text = node.text()?;
    profiles_from_str(&text).map_err(|e| match e {
        YamlError::Syntax { message, .. } => {
            node.error(format!("not a YAML list of QoS profiles: {message}"))
        }
        YamlError::Shape { key, message } => node.error(format!("{key}: {message}")),
    })
}

/// Profiles from the YAML text stored in sqlite and MCAP (`""` is none).
pub fn parse_profiles(text: &str) -> Result<Vec<QosProfile>, String> {
    profiles_from_str(text).map_err(|e| match e {
        YamlError::Syntax {
            line,
            column,
            message,
        } => format!("line {line}, column {column}: {message}"),
        YamlError::Shape { key, message } if key.is_empty() => message,
        YamlError::Shape { key, message } => format!("{key}: {message}"),
    })
}

fn profiles_from_str(text: &str) -> Result<Vec<QosProfile>, YamlError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let doc = parse(text)?;
    let at = At::root();
    let node = at.node(&doc);
    if node.is_null() {
        return Ok(Vec::new());
    }
    profiles_from_list(node)
}

fn profiles_from_list(node: Node<'_, '_>) -> Result<Vec<QosProfile>, YamlError> {
    node.sequence()?
        .iter()
        .enumerate()
        .map(|(i, item)| QosProfile::from_node(node.item_path(i).node(item)))
        .collect()
}

/// The profiles as the YAML text sqlite and MCAP store (`""` for none).
pub fn profiles_to_string(profiles: &[QosProfile], names: bool) -> String {
    let style = if names {
        EnumStyle::Names
    } else {
        EnumStyle::Numbers
    };
    let mut e = Emitter::new();
    for p in profiles {
        p.emit(&mut e, 2, style);
    }
    e.finish()
}

/// The profiles as a block list under a key at `indent` (metadata v9).
pub(crate) fn emit_profiles_list(
    e: &mut Emitter,
    indent: usize,
    key: &str,
    profiles: &[QosProfile],
) {
    if profiles.is_empty() {
        e.scalar(indent, false, key, "[]");
        return;
    }
    e.key(indent, false, key);
    for p in profiles {
        p.emit(e, indent + 4, EnumStyle::Names);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const FOXY: &str = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false";

    #[test]
    fn integer_and_name_spellings_read_alike_and_round_trip() {
        let numbers = parse_profiles(FOXY).unwrap();
        assert_eq!(numbers.len(), 1);
        let p = numbers[0];
        assert_eq!(p.history, History::Unknown);
        assert_eq!(p.reliability, Reliability::Reliable);
        assert_eq!(p.durability, Durability::Volatile);
        assert_eq!(p.deadline, QosDuration::INFINITE);
        assert_eq!(p.lifespan, QosDuration::default());
        let names = profiles_to_string(&numbers, true);
        assert!(
            names.starts_with("- history: unknown\n  depth: 0\n  reliability: reliable\n"),
            "{names}"
        );
        assert_eq!(parse_profiles(&names).unwrap(), numbers);
        let again = profiles_to_string(&numbers, false);
        assert_eq!(parse_profiles(&again).unwrap(), numbers);
        // Both spellings in one list, as rosbag2 reads them: per profile.
        let mixed = format!("{again}\n{names}");
        assert_eq!(parse_profiles(&mixed).unwrap(), [p, p]);
        assert_eq!(parse_profiles("").unwrap(), []);
        assert_eq!(parse_profiles("[]").unwrap(), []);
        assert!(
            parse_profiles("- history: 9")
                .unwrap_err()
                .contains("unknown policy number 9")
        );
    }
}
