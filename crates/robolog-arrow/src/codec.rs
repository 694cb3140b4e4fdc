//! Which decoder a channel gets, and the columns its messages become.

use std::sync::Arc;

use robolog::Channel;
use robolog::encodings::{BDDF_POD, CDR, JSON, PROTOBUF, ROS1, ROS1MSG};
use robolog::msg::{Dialect, Registry, TypeName};
use robolog::ros1::Plan;

use crate::cdr::CdrCodec;
use crate::column::{Columns, Member, Shape};
use crate::error::Error;
use crate::pod::PodCodec;
use crate::protobuf::ProtobufCodec;
use crate::ros::Ros1Codec;

/// The JSON Schema encoding of MCAP schema records.
const JSONSCHEMA: &str = "jsonschema";

/// A channel's decoder into columns.
#[derive(Debug)]
pub(crate) enum Codec {
    Ros1(Ros1Codec),
    Cdr(CdrCodec),
    Json,
    Protobuf(ProtobufCodec),
    Pod(PodCodec),
    /// The message bytes, unchanged, in one `data` column.
    Raw,
}

/// A codec and the top-level columns of its messages.
#[derive(Debug)]
pub(crate) struct Described {
    pub(crate) codec: Codec,
    pub(crate) members: Vec<Member>,
}

/// The one column of a channel exported as raw bytes.
pub(crate) fn raw_members() -> Vec<Member> {
    vec![Member::new("data", Shape::Binary, false, 0)]
}

impl Codec {
    /// The decoder and columns for `channel`, or why its messages cannot become columns.
    pub(crate) fn describe(channel: &Channel) -> Result<Described, Error> {
        let schema_error = |reason: String| Error::Schema {
            topic: channel.topic.clone(),
            schema_name: channel.type_name().to_owned(),
            reason,
        };
        let not_decodable = |reason: &str| Error::NotDecodable {
            topic: channel.topic.clone(),
            encoding: channel.message_encoding.clone(),
            reason: reason.to_owned(),
        };
        let schema = channel.schema.as_deref();
        match channel.message_encoding.as_str() {
            ROS1 => {
                let schema = schema
                    .filter(|s| s.encoding == ROS1MSG)
                    .ok_or_else(|| not_decodable("the channel has no ros1msg schema"))?;
                let text = schema
                    .text()
                    .ok_or_else(|| schema_error("the definition is not UTF-8".into()))?;
                let plan = Plan::from_bundle(&schema.name, text)
                    .map_err(|e| schema_error(e.to_string()))?;
                let name =
                    TypeName::parse(&schema.name).map_err(|e| schema_error(e.to_string()))?;
                let registry = Registry::from_bundle(&name, text, Dialect::Ros1)
                    .map_err(|e| schema_error(e.to_string()))?;
                let members = crate::ros::message_members(&registry, &name, Dialect::Ros1)
                    .map_err(schema_error)?;
                Ok(Described {
                    codec: Codec::Ros1(Ros1Codec::new(Arc::new(plan))),
                    members,
                })
            }
            CDR => {
                // The decoder's own definitions (schema completed from, or taken from, the
                // bundled standard interfaces), so that columns and values agree with it.
                let (registry, name) = robolog::cdr_definitions(channel).map_err(|e| match e {
                    robolog::DecodeError::NotDecodable { reason, .. } => not_decodable(&reason),
                    robolog::DecodeError::Schema { reason, .. } => schema_error(reason),
                    other => schema_error(other.to_string()),
                })?;
                let plan = robolog::cdr::Plan::compile(&registry, &name)
                    .map_err(|e| schema_error(e.to_string()))?;
                let members = crate::ros::message_members(&registry, &name, Dialect::Ros2)
                    .map_err(schema_error)?;
                Ok(Described {
                    codec: Codec::Cdr(CdrCodec::new(Arc::new(plan))),
                    members,
                })
            }
            JSON => {
                let schema = schema
                    .filter(|s| s.encoding == JSONSCHEMA)
                    .ok_or_else(|| not_decodable("the channel has no JSON Schema (schema encoding jsonschema) to take columns from"))?;
                let members = crate::json::schema_members(&schema.data).map_err(schema_error)?;
                Ok(Described {
                    codec: Codec::Json,
                    members,
                })
            }
            PROTOBUF => {
                let schema = schema
                    .filter(|s| s.encoding == PROTOBUF && !s.data.is_empty())
                    .ok_or_else(|| {
                        not_decodable(
                            "the channel has no protobuf descriptor set (BDDF stores none)",
                        )
                    })?;
                let (codec, members) =
                    ProtobufCodec::new(&schema.name, &schema.data).map_err(schema_error)?;
                Ok(Described {
                    codec: Codec::Protobuf(codec),
                    members,
                })
            }
            BDDF_POD => {
                let (codec, members) = PodCodec::new(channel).map_err(schema_error)?;
                Ok(Described {
                    codec: Codec::Pod(codec),
                    members,
                })
            }
            _ => Err(not_decodable("robolog has no decoder for this encoding")),
        }
    }

    /// Prepares for decoding only the `columns` kept by a projection.
    pub(crate) fn project(&mut self, columns: &Columns, all_selected: bool) {
        match self {
            Codec::Ros1(codec) => codec.project(columns, all_selected),
            Codec::Cdr(codec) => codec.project(columns, all_selected),
            _ => {}
        }
    }

    /// Appends one message's values to `columns`. On error nothing was appended.
    pub(crate) fn append(&mut self, data: &[u8], columns: &mut Columns) -> Result<(), String> {
        match self {
            Codec::Ros1(codec) => codec.append(data, columns),
            Codec::Cdr(codec) => codec.append(data, columns),
            Codec::Json => crate::json::append(data, columns),
            Codec::Protobuf(codec) => codec.append(data, columns),
            Codec::Pod(codec) => codec.append(data, columns),
            Codec::Raw => {
                if let Some(&node) = columns.top.first()
                    && let crate::column::Values::Binary(b) = &mut columns.nodes[node].values
                {
                    b.append_value(data);
                }
                Ok(())
            }
        }
    }
}
