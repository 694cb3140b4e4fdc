//! RIHS01 type hashes of ROS 2 channels: computed from the channel's definition, and compared
//! with the hash the recording declares (the `topic_type_hash` channel metadata of rosbag2's
//! MCAP storage, `type_description_hash` in a rosbag2 metadata.yaml).

use robolog_msg::{Distro, Registry, TypeName};

use crate::decode::DecodeError;
use crate::encodings::{CDR, ROS2IDL, ROS2MSG, TOPIC_TYPE_HASH};
use crate::model::Channel;
use crate::problem::{Problem, ProblemKind};

/// The hash the recording declares for `channel`, when it declares one.
pub(crate) fn recorded(channel: &Channel) -> Option<&str> {
    channel
        .metadata
        .get(TOPIC_TYPE_HASH)
        .map(String::as_str)
        .filter(|hash| !hash.is_empty())
}

/// The RIHS01 type hash of a ROS 2 channel's definition (`RIHS01_` and 64 hex digits), as
/// ROS 2 computes it from the `.msg`/`.idl` files: `None` for a channel that is not `cdr` or
/// whose recording holds no `ros2msg`/`ros2idl` definition. A definition that lacks a section
/// is completed from the bundled standard interfaces, from the distro that gives the recorded
/// hash when one does (the newest otherwise). Service-event channels (`pkg/srv/Foo_Event`)
/// hash their event message.
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use robolog::{Bytes, Channel, Schema};
///
/// let channel = Channel {
///     id: 0,
///     topic: "/chatter".into(),
///     message_encoding: "cdr".into(),
///     schema: Some(Arc::new(Schema {
///         id: 1,
///         name: "std_msgs/msg/String".into(),
///         encoding: "ros2msg".into(),
///         data: Bytes::from_static(b"string data\n"),
///     })),
///     metadata: BTreeMap::new(),
/// };
/// assert_eq!(
///     robolog::type_hash(&channel).transpose()?.as_deref(),
///     Some("RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18")
/// );
/// # Ok::<(), robolog::DecodeError>(())
/// ```
pub fn type_hash(channel: &Channel) -> Option<Result<String, DecodeError>> {
    let schema = channel.schema.as_deref()?;
    if channel.message_encoding != CDR || !matches!(schema.encoding.as_str(), ROS2MSG | ROS2IDL) {
        return None;
    }
    let error = |reason: String| DecodeError::Schema {
        topic: channel.topic.clone(),
        type_name: schema.name.clone(),
        reason,
    };
    Some(
        compute(
            &schema.name,
            &schema.encoding,
            &schema.data,
            recorded(channel),
        )
        .map_err(error),
    )
}

fn compute(
    schema_name: &str,
    encoding: &str,
    data: &[u8],
    recorded: Option<&str>,
) -> Result<String, String> {
    let name = TypeName::parse(schema_name).map_err(|e| e.to_string())?;
    let text =
        std::str::from_utf8(data).map_err(|e| format!("the definition is not UTF-8 text: {e}"))?;
    let registry =
        Registry::from_ros2_schema(schema_name, encoding, text).map_err(|e| e.to_string())?;
    let complete = registry.dependencies(&name).is_ok();
    if complete {
        return registry.type_hash(&name).map_err(|e| e.to_string());
    }
    // Missing sections: which distro completes them changes the hash, so the one that gives
    // the recorded hash wins (the recorder had that distro's definitions).
    let mut newest = None;
    for distro in Distro::ALL.iter().rev() {
        let mut filled = registry.clone();
        filled.fill_missing_from(Registry::standard(*distro), &name);
        let Ok(hash) = filled.type_hash(&name) else {
            continue;
        };
        if recorded.is_none_or(|r| r == hash) {
            return Ok(hash);
        }
        newest.get_or_insert(hash);
    }
    match newest {
        Some(hash) => Ok(hash),
        // Not completed by any distro: the error names what is missing.
        None => registry.type_hash(&name).map_err(|e| e.to_string()),
    }
}

/// `check`'s findings about type hashes: a ROS 2 channel whose recorded hash differs from the
/// hash of its definition (the definition is not the one the publisher used, or the hash was
/// recorded wrong), or whose definition cannot be hashed. Warnings: no data is lost, but a
/// reader that trusts either may decode wrongly.
pub(crate) fn problems<'a>(channels: impl IntoIterator<Item = &'a Channel>) -> Vec<Problem> {
    let mut problems = Vec::new();
    for channel in channels {
        let Some(recorded) = recorded(channel) else {
            continue;
        };
        let what = format!(
            "channel {} ({}, {})",
            channel.id,
            channel.topic,
            channel.type_name()
        );
        match type_hash(channel) {
            None => {}
            Some(Ok(computed)) if computed == recorded => {}
            Some(Ok(computed)) => problems.push(Problem::warning(
                ProblemKind::Schema,
                None,
                format!(
                    "{what}: the recorded type hash {recorded} does not match its definition, \
                     whose hash is {computed}"
                ),
            )),
            Some(Err(DecodeError::Schema { reason, .. })) => problems.push(Problem::warning(
                ProblemKind::Schema,
                None,
                format!("{what}: the definition cannot be hashed to check the recorded type hash {recorded}: {reason}"),
            )),
            Some(Err(e)) => problems.push(Problem::warning(
                ProblemKind::Schema,
                None,
                format!("{what}: {e}"),
            )),
        }
    }
    problems
}

/// The type hash `info` shows for `channel`: the one computed from its definition, else the one
/// the recording declares (a ROS 2 channel stored without a definition); `None` when there is
/// neither, or when the definition cannot be hashed (`check` says why).
pub fn shown_type_hash(channel: &Channel) -> Option<String> {
    match type_hash(channel) {
        Some(Ok(hash)) => Some(hash),
        Some(Err(_)) => None,
        None => (channel.message_encoding == CDR)
            .then(|| recorded(channel))
            .flatten()
            .map(str::to_owned),
    }
}
