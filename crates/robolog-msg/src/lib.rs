//! ROS interface definitions: parse `.msg`, `.srv` and `.action` texts in the ROS 1 (genmsg) and
//! ROS 2 (rosidl) dialects, read and write the definition bundles stored in bags and MCAP
//! schemas, resolve types in a registry, and compute the ROS 1 md5sum exactly as genmsg does.
//!
//! This crate depends on nothing else of robolog, so it can be used alone.

#![forbid(unsafe_code)]
