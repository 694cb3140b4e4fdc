//! Canonical definition text: what a definition says, without comments or layout.

use crate::model::MessageDefinition;

impl MessageDefinition {
    /// The definition as a canonical `.msg` text in its own dialect: constants first as
    /// `TYPE NAME=VALUE`, then fields as `TYPE NAME` (plus ` DEFAULT` in ROS 2), with message
    /// types fully qualified, values spelled as written, no comments, one declaration per line.
    ///
    /// Parsing this text again (as the same type, in the same dialect) gives the same constants
    /// and fields. For ROS 1 it is also exactly the md5 text of a message without nested types.
    pub fn canonical_text(&self) -> String {
        let mut out = String::new();
        for constant in &self.constants {
            out.push_str(&format!(
                "{} {}={}\n",
                constant.ty, constant.name, constant.value_text
            ));
        }
        for field in &self.fields {
            out.push_str(&field.type_text);
            out.push(' ');
            out.push_str(&field.name);
            if let Some(default) = &field.default {
                out.push(' ');
                out.push_str(&default.text);
            }
            out.push('\n');
        }
        out
    }
}
