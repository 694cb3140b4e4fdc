//! The ROS 1 wire format: compile a parsed message definition (from `robolog-msg`) into a decode
//! plan once, then decode message bytes into a zero-copy value tree, extract single fields by
//! path, encode values back byte-exactly, and render them as JSON.

#![forbid(unsafe_code)]
