//! The ROS 1 md5sum, exactly as genmsg's `compute_md5_text` computes it.
//!
//! The hashed text is: every constant as `TYPE NAME=VALUE_TEXT` (the value as written), then
//! every field as `TYPE NAME` for built-in types (type as written, array suffix included) or
//! `MD5 NAME` for message types (the nested type's md5sum; the array suffix is dropped), one per
//! line, without the final newline. A service hashes its request text immediately followed by
//! its response text.

use std::collections::HashMap;

use ::md5::{Digest, Md5};

use crate::error::Error;
use crate::model::{Dialect, ElementType, MessageDefinition};
use crate::name::TypeName;
use crate::python_text::strip;
use crate::registry::Registry;

impl Registry {
    /// The ROS 1 md5sum of the message `name` (32 lowercase hex digits).
    ///
    /// Fails when a dependency is missing, unparsable or recursive, or when a type involved was
    /// parsed as ROS 2 (the md5sum is a ROS 1 notion).
    pub fn md5(&self, name: &TypeName) -> Result<String, Error> {
        Ok(md5_hex(self.md5_text(name)?.as_bytes()))
    }

    /// The text whose MD5 is the md5sum of `name` (useful to see why two sums differ).
    pub fn md5_text(&self, name: &TypeName) -> Result<String, Error> {
        let sums = self.dependency_md5s(name)?;
        let definition = self.require(name)?;
        Ok(md5_text(definition, &sums))
    }

    /// The ROS 1 md5sum of the service `name`: MD5 of the request's md5 text immediately
    /// followed by the response's, with no separator. (roscpp's generated `SrvRequest` and
    /// `SrvResponse` classes report this sum too, not their own message md5sums.)
    pub fn service_md5(&self, name: &TypeName) -> Result<String, Error> {
        let service = self
            .service(name)
            .ok_or_else(|| Error::MissingService { name: name.clone() })?;
        let request = self.md5_text(&service.request.name)?;
        let response = self.md5_text(&service.response.name)?;
        Ok(md5_hex(format!("{request}{response}").as_bytes()))
    }

    /// The md5sum of every type `name` depends on, computed children first.
    fn dependency_md5s(&self, name: &TypeName) -> Result<HashMap<TypeName, String>, Error> {
        let walk = self.walk(name)?;
        let mut sums = HashMap::with_capacity(walk.postorder.len());
        for type_name in &walk.postorder {
            let definition = self.require(type_name)?;
            if definition.dialect != Dialect::Ros1 {
                return Err(Error::NotRos1 {
                    name: type_name.clone(),
                });
            }
            if type_name != name {
                let sum = md5_hex(md5_text(definition, &sums).as_bytes());
                sums.insert(type_name.clone(), sum);
            }
        }
        Ok(sums)
    }
}

/// genmsg `compute_md5_text`, given the md5sums of the nested types.
fn md5_text(definition: &MessageDefinition, nested: &HashMap<TypeName, String>) -> String {
    let mut text = String::new();
    for constant in &definition.constants {
        text.push_str(&format!(
            "{} {}={}\n",
            constant.ty, constant.name, constant.value_text
        ));
    }
    for field in &definition.fields {
        match &field.ty.element {
            ElementType::Message(name) => {
                // The walk computed every nested sum before this type's.
                let sum = nested.get(name).map_or("", String::as_str);
                text.push_str(&format!("{sum} {}\n", field.name));
            }
            _ => text.push_str(&format!("{} {}\n", field.type_text, field.name)),
        }
    }
    strip(&text).to_owned()
}

/// Lowercase hex MD5 of `bytes`.
pub(crate) fn md5_hex(bytes: &[u8]) -> String {
    let digest = Md5::digest(bytes);
    let mut out = String::with_capacity(32);
    for byte in digest.iter() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_hex_matches_rfc_1321_vectors() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
