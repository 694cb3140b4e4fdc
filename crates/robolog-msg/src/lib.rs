//! ROS interface definitions: parse `.msg`, `.srv` and `.action` texts in the ROS 1 (genmsg)
//! and ROS 2 (rosidl) dialects, read and write the definition bundles stored in bags and MCAP
//! schemas, resolve types in a [`Registry`], and compute the ROS 1 md5sum exactly as genmsg
//! does.
//!
//! ```
//! use robolog_msg::{Dialect, Registry, TypeName};
//!
//! // A `message_definition` as a ROS 1 publisher stores it in a bag.
//! let bundle = "\
//! Header header
//! Point2 point
//!
//! ================================================================================
//! MSG: std_msgs/Header
//! uint32 seq
//! time stamp
//! string frame_id
//!
//! ================================================================================
//! MSG: my_pkg/Point2
//! float32 x
//! float32 y
//! ";
//! let top: TypeName = "my_pkg/Reading".parse()?;
//! let registry = Registry::from_bundle(&top, bundle, Dialect::Ros1)?;
//!
//! let fields: Vec<String> = registry
//!     .require(&top)?
//!     .fields
//!     .iter()
//!     .map(|field| format!("{} {}", field.ty, field.name))
//!     .collect();
//! assert_eq!(fields, ["std_msgs/Header header", "my_pkg/Point2 point"]);
//!
//! assert_eq!(registry.md5(&top)?, "34a3db8e119af2b63beea7dace56fee1");
//! assert_eq!(registry.bundle_text(&top)?, bundle);
//! # Ok::<(), robolog_msg::Error>(())
//! ```
//!
//! This crate depends on nothing else of robolog, so it can be used alone.
//!
//! Where the modules come from: [`parse_message`], [`parse_service`] and [`parse_action`] parse
//! one text ([`ParseDialect::Auto`] picks the dialect, see [`detect_dialect`]); [`Bundle`] splits
//! a bundle and [`write_bundle`] joins one; [`Registry`] holds resolved types, walks dependencies
//! ([`Registry::dependencies`]), computes md5sums ([`Registry::md5`],
//! [`Registry::service_md5`]), writes bundles ([`Registry::bundle_text`]) and loads package
//! folders ([`Registry::load_package_tree`]).
//!
//! ROS 2: [`Registry::from_ros2msg`] reads a schema as MCAP and rosbag2 store it (sections,
//! service events, actions, the built-in `builtin_interfaces` and `service_msgs` types), and
//! [`Registry::type_hash`] computes the RIHS01 type hash rosbag2 records (also for services
//! and actions: [`Registry::service_type_hash`], [`Registry::action_type_hash`]).
//! [`Registry::standard`] holds the standard ROS 2 interfaces of each [`Distro`] (cargo feature
//! `standard-interfaces`, on by default), for types that a recording has no schema for.
//!
//! [`json`] (cargo feature `json`) writes the JSON text of message values by the rules the ROS 1
//! and ROS 2 renderers share.

#![forbid(unsafe_code)]

mod bundle;
mod dialect;
mod error;
mod field_path;
mod idl;
#[cfg(feature = "json")]
pub mod json;
mod md5sum;
mod model;
mod name;
mod package_tree;
mod parse;
mod python_literal;
mod python_text;
mod registry;
mod render;
mod ros1;
mod ros2;
mod ros2_builtins;
mod ros2_schema;
mod sections;
mod source_line;
mod standard;
mod type_hash;

pub use bundle::{Bundle, BundleSection, SECTION_SEPARATOR, write_bundle};
pub use dialect::detect_dialect;
pub use error::{Error, SyntaxError, Warning};
pub use field_path::{FieldPathError, PathToken, parse_field_path};
pub use model::{
    ActionDefinition, ArrayKind, Constant, DefaultValue, Dialect, ElementType, Field, FieldType,
    MessageDefinition, ParseDialect, PrimitiveType, ServiceDefinition, Value,
};
pub use name::{InterfaceKind, TypeName};
pub use parse::{parse_action, parse_message, parse_service};
pub use registry::Registry;
pub use standard::Distro;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
