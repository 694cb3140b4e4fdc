//! The order in which a query returns messages.

/// The order in which a query returns messages, the same for every format and for the facade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// By log time, earliest first; equal times in file order.
    #[default]
    LogTime,
    /// By log time, latest first: the exact reverse of [`Order::LogTime`].
    ReverseLogTime,
    /// As stored in the file (no merging of chunks that overlap in time).
    File,
    /// Channel after channel, by topic name (then channel id), each in log-time order: what a
    /// reader of one topic at a time wants next to each other. Each channel is a query of its
    /// own, which reads only the chunks that hold it. (A container that does not tell the
    /// engine its topics, [`Container::topic_order`](crate::Container::topic_order), is read
    /// in log-time order.)
    Topic,
}
