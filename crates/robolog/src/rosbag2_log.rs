//! ROS 2 bags (rosbag2 directories, lone `.db3`/`.mcap` storage files) in the model: topics
//! become channels laid out as rosbag2's MCAP storage writes them, receive times become log
//! times.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_rosbag2::{Bag, Definition, MetadataSource, StorageId, Topic};

use crate::error::{Error, Result};
use crate::format::Format;
use crate::log::{MessagesInner, channel_by_id};
use crate::model::{Channel, Message, Schema};
use crate::problem::{Problem, ProblemKind};
use crate::query::{Filter, Order, Selection};
use crate::summary::{ChannelSummary, IndexUse, Summary};

/// Channel metadata key of the QoS profiles (YAML text), as rosbag2's MCAP storage names it.
pub(crate) const QOS_KEY: &str = "offered_qos_profiles";
/// Channel metadata key of the RIHS01 type hash, as rosbag2's MCAP storage names it.
pub(crate) const TYPE_HASH_KEY: &str = "topic_type_hash";

/// The channel of a topic: `cdr` messages, a `ros2msg`/`ros2idl` schema when the bag stores the
/// definition (an empty schema with encoding `""` otherwise), QoS and type hash in the metadata.
pub(crate) fn channel(topic: &Topic, schema_id: u32) -> Channel {
    let (encoding, text) = match &topic.definition {
        Definition::Stored { encoding, text } => (encoding.clone(), text.clone()),
        Definition::NotFound { encoding } => (encoding.clone(), String::new()),
        _ => (String::new(), String::new()),
    };
    let mut metadata = BTreeMap::new();
    metadata.insert(
        QOS_KEY.to_owned(),
        robolog_rosbag2::qos::profiles_to_string(&topic.metadata.offered_qos_profiles, true),
    );
    metadata.insert(
        TYPE_HASH_KEY.to_owned(),
        topic.metadata.type_description_hash.clone(),
    );
    Channel {
        id: topic.id,
        topic: topic.metadata.name.clone(),
        message_encoding: topic.metadata.serialization_format.clone(),
        schema: Some(Arc::new(Schema {
            id: schema_id,
            name: topic.metadata.type_name.clone(),
            encoding,
            data: Bytes::from(text.into_bytes()),
        })),
        metadata,
    }
}

#[derive(Debug)]
pub(crate) struct Rosbag2Log {
    bag: Bag,
}

/// The distro [`crate::OpenOptions::distro`] chose (nothing to choose without the `cdr`
/// feature).
#[cfg(feature = "cdr")]
pub(crate) type DistroChoice = Option<robolog_msg::Distro>;
/// The distro [`crate::OpenOptions`] chose (nothing to choose without the `cdr` feature).
#[cfg(not(feature = "cdr"))]
pub(crate) type DistroChoice = Option<std::convert::Infallible>;

/// The definition of a topic whose bag stores none, from the bundled standard interfaces of
/// `choice` or else the distro the bag names; `Err` with a problem when no bundled distro
/// defines the type.
#[cfg(feature = "cdr")]
fn standard_definition(
    topic: &Topic,
    choice: DistroChoice,
    named: Option<&str>,
) -> std::result::Result<Option<Definition>, Problem> {
    use robolog_msg::{Distro, Registry, TypeName};

    let Ok(name) = TypeName::parse(&topic.metadata.type_name) else {
        return Ok(None);
    };
    let distro = choice.or_else(|| named.and_then(|d| d.parse::<Distro>().ok()));
    if let Some(distro) = distro
        && let Ok(text) = Registry::standard(distro).bundle_text(&name)
    {
        return Ok(Some(Definition::Stored {
            encoding: crate::encodings::ROS2MSG.to_owned(),
            text,
        }));
    }
    if Distro::ALL
        .iter()
        .any(|d| Registry::standard(*d).contains(&name))
    {
        // The decoder picks the distro by the recorded type hash.
        return Ok(None);
    }
    Err(Problem::warning(
        ProblemKind::Schema,
        None,
        format!(
            "topic {}: the bag stores no definition of {}, and no bundled ROS 2 distro \
             defines it: its messages cannot be decoded",
            topic.metadata.name, topic.metadata.type_name
        ),
    ))
}

impl Rosbag2Log {
    pub(crate) fn open(
        path: &Path,
        distro: DistroChoice,
        options: robolog_rosbag2::OpenOptions,
    ) -> Result<(Self, Vec<Arc<Channel>>, Vec<Problem>)> {
        let bag = options.open(path)?;
        // Without `cdr` nothing adds problems or definitions to the bag's own.
        #[cfg_attr(not(feature = "cdr"), allow(unused_mut))]
        let mut problems: Vec<Problem> = bag.problems().to_vec();
        let mut schemas: HashMap<(String, Definition), u32> = HashMap::new();
        let channels = bag
            .topics()
            .iter()
            .map(|t| {
                #[cfg_attr(not(feature = "cdr"), allow(unused_mut))]
                let mut topic = std::borrow::Cow::Borrowed(t);
                #[cfg(feature = "cdr")]
                if !matches!(t.definition, Definition::Stored { .. }) {
                    match standard_definition(t, distro, bag.ros_distro()) {
                        Ok(Some(definition)) => topic.to_mut().definition = definition,
                        Ok(None) => {}
                        Err(p) => problems.push(p),
                    }
                }
                #[cfg(not(feature = "cdr"))]
                let _ = distro;
                let next = schemas.len() as u32 + 1;
                let id = *schemas
                    .entry((topic.metadata.type_name.clone(), topic.definition.clone()))
                    .or_insert(next);
                Arc::new(channel(&topic, id))
            })
            .collect();
        Ok((Self { bag }, channels, problems))
    }

    pub(crate) fn bag(&self) -> &Bag {
        &self.bag
    }

    /// Bytes of the storage files.
    pub(crate) fn file_size(&self) -> u64 {
        self.bag
            .files()
            .iter()
            .filter_map(|f| std::fs::metadata(&f.path).ok())
            .map(|m| m.len())
            .sum()
    }

    pub(crate) fn summary(&self, channels: &[Arc<Channel>], file_size: u64) -> Summary {
        let bag = &self.bag;
        let mut properties = BTreeMap::new();
        properties.insert("storage".to_owned(), bag.storage().name().to_owned());
        properties.insert("files".to_owned(), bag.files().len().to_string());
        if let Some(c) = bag.compression() {
            properties.insert(
                "compression".to_owned(),
                format!("{c:?}").to_ascii_lowercase(),
            );
        }
        if let Some(d) = bag.ros_distro() {
            properties.insert("ros_distro".to_owned(), d.to_owned());
        }
        if let Some(v) = bag.files().first().and_then(|f| f.sqlite_schema_version) {
            properties.insert("sqlite_schema_version".to_owned(), v.to_string());
        }
        let version = bag.metadata().map_or_else(
            || "storage file".to_owned(),
            |m| format!("metadata {}", m.version),
        );
        Summary {
            format: Format::Rosbag2,
            version,
            properties,
            file_size,
            message_count: bag.message_count(),
            start_ns: bag.start_ns(),
            end_ns: bag.end_ns(),
            channels: channels
                .iter()
                .map(|c| ChannelSummary {
                    channel: Arc::clone(c),
                    message_count: bag.topic(c.id).map_or(0, |t| t.message_count),
                })
                .collect(),
            chunks: None,
            attachments: Vec::new(),
            metadata: Vec::new(),
            index: match bag.metadata_source() {
                MetadataSource::Rebuilt => IndexUse::Scan {
                    reason: "metadata.yaml is missing or stale: the bag was rebuilt from its storage files".to_owned(),
                },
                _ => IndexUse::Index,
            },
        }
    }

    pub(crate) fn messages(
        &self,
        channels: &[Arc<Channel>],
        selection: &Selection,
        filter: &Filter,
        order: Order,
    ) -> Result<MessagesInner> {
        let mut query = self
            .bag
            .messages()
            .time_range(filter.start_ns()..=filter.end_ns_inclusive())
            .order(order);
        if let Some(ids) = &selection.channels {
            query = query.topic_ids(ids.iter().copied());
        }
        Ok(MessagesInner::Rosbag2(Rosbag2Messages {
            inner: query.iter()?,
            channels: channels.to_vec(),
        }))
    }
}

pub(crate) struct Rosbag2Messages {
    inner: robolog_rosbag2::Messages,
    channels: Vec<Arc<Channel>>,
}

impl Rosbag2Messages {
    pub(crate) fn next(&mut self) -> Option<Result<Message>> {
        let m = match self.inner.next()? {
            Ok(m) => m,
            Err(e) => return Some(Err(e.into())),
        };
        let Some(channel) = channel_by_id(&self.channels, m.topic) else {
            return Some(Err(Error::UndefinedChannel {
                format: Format::Rosbag2,
                channel: u64::from(m.topic),
                offset: None,
            }));
        };
        Some(Ok(Message {
            channel: Arc::clone(channel),
            log_time_ns: m.log_time,
            publish_time_ns: m.publish_time,
            sequence: m.sequence,
            data: m.data,
        }))
    }
}

/// A ROS 2 bag error as an error-severity problem (its message names the file).
fn rosbag2_problem(e: &robolog_rosbag2::Error) -> Problem {
    Problem::error(e.problem_kind(), e.offset(), e.to_string())
}

/// Checks a ROS 2 bag: what opening found, every message read, and each MCAP storage file
/// through the MCAP checks.
pub(crate) fn check(path: &Path) -> (u64, Vec<Problem>) {
    let bag = match Bag::open(path) {
        Ok(bag) => bag,
        Err(e) => return (0, vec![rosbag2_problem(&e)]),
    };
    let mut problems: Vec<Problem> = bag.problems().to_vec();
    #[cfg(feature = "cdr")]
    {
        let channels: Vec<Channel> = bag.topics().iter().map(|t| channel(t, 0)).collect();
        problems.extend(crate::type_hash::problems(&channels));
    }
    #[cfg(feature = "mcap")]
    for file in bag.files() {
        if file.storage != StorageId::Mcap || file.compressed {
            continue;
        }
        if let Ok(data) = robolog_framing::read_file(&file.path) {
            problems.extend(
                robolog_mcap::check(&data)
                    .into_iter()
                    .map(|p| p.with_path(&file.path)),
            );
        }
    }
    #[cfg(not(feature = "mcap"))]
    let _ = StorageId::Mcap;
    let mut read = 0u64;
    match bag.messages().order(Order::File).iter() {
        Ok(messages) => {
            for m in messages {
                match m {
                    Ok(_) => read += 1,
                    Err(e) => {
                        problems.push(rosbag2_problem(&e));
                        if e.is_damage() {
                            problems.push(Problem::info(
                                e.problem_kind(),
                                None,
                                "`robolog recover` reads damaged storage files page by page",
                            ));
                        }
                        break;
                    }
                }
            }
        }
        Err(e) => problems.push(rosbag2_problem(&e)),
    }
    if read != bag.message_count() {
        problems.push(Problem::error(
            ProblemKind::Malformed,
            None,
            format!(
                "the storage files count {} messages, but {read} could be read",
                bag.message_count()
            ),
        ));
    }
    (read, problems)
}
