//! The robolog facade: open any supported log (ROS bag 1.2/2.0, MCAP, BDDF) detected from its
//! first bytes, read it through one message model (channels, schemas, messages), decode ROS 1
//! messages, and convert or merge logs between formats. Each format is a cargo feature.

#![forbid(unsafe_code)]
