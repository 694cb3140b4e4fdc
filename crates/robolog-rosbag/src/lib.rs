//! ROS bag files: read format 2.0 (indexed over a byte slice, or streaming over `Read`) and 1.2,
//! write 2.0 (and 1.2), and reindex or recover bags that were never closed or were cut short.
//!
//! Messages come out as opaque bytes plus their connection's type, md5sum and definition;
//! understanding the definitions is the job of `robolog-msg` and `robolog-ros1`.

#![forbid(unsafe_code)]
