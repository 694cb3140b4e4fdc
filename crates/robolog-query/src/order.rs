//! The order in which a query returns messages.

/// The order in which a query returns messages, the same for every format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// By log time, earliest first; equal times in file order.
    #[default]
    LogTime,
    /// By log time, latest first: the exact reverse of [`Order::LogTime`].
    ReverseLogTime,
    /// As stored in the file (no merging of chunks that overlap in time).
    File,
}
