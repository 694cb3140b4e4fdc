//! Several logs read as one stream of messages in log-time order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::Result;
use crate::log::{Log, Messages};
use crate::model::Message;
use crate::query::{Filter, Order};

/// The messages of several logs in log-time order; equal times come from the earlier input
/// first, then in file order. Each item says which input (its index) the message is from.
///
/// Memory holds one message per input beside what each input's query holds. A read error
/// ends that input's messages (it is yielded once); the others go on.
///
/// ```
/// use robolog::{Filter, MergedMessages};
/// let path = |p| robolog_testkit::testdata::path(p);
/// let bag = robolog::open(path("bags/generated/ros_comm/ref_lz4.bag"))?;
/// let mcap = robolog::open(path("samples/demo-zstd.mcap"))?;
/// let merged = MergedMessages::new(&[&bag, &mcap], &Filter::new().topics(["/chatter"]))?;
/// let mut last = 0;
/// let mut count = 0;
/// for item in merged {
///     let (_input, message) = item?;
///     assert!(message.log_time_ns >= last);
///     last = message.log_time_ns;
///     count += 1;
/// }
/// assert_eq!(count, 50 + 100);
/// # Ok::<(), robolog::Error>(())
/// ```
pub struct MergedMessages {
    sources: Vec<Messages>,
    heads: Vec<Option<Message>>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// A read error found while refilling, yielded before the next message.
    pending: Option<crate::Error>,
}

impl std::fmt::Debug for MergedMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedMessages")
            .field("inputs", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl MergedMessages {
    /// Starts reading the messages of `logs` that `filter` selects. Fails on an invalid topic
    /// pattern or when an input's first message cannot be read.
    pub fn new(logs: &[&Log], filter: &Filter) -> Result<Self> {
        let mut sources: Vec<Messages> = logs
            .iter()
            .map(|log| {
                log.messages()
                    .filter(filter.clone())
                    .order(Order::LogTime)
                    .iter()
            })
            .collect::<Result<_>>()?;
        let mut heads = Vec::with_capacity(sources.len());
        let mut heap = BinaryHeap::new();
        for (i, source) in sources.iter_mut().enumerate() {
            let head = source.next().transpose()?;
            if let Some(m) = &head {
                heap.push(Reverse((m.log_time_ns, i)));
            }
            heads.push(head);
        }
        Ok(MergedMessages {
            sources,
            heads,
            heap,
            pending: None,
        })
    }
}

impl Iterator for MergedMessages {
    type Item = Result<(usize, Message)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.pending.take() {
            return Some(Err(error));
        }
        loop {
            let Reverse((_, i)) = self.heap.pop()?;
            let Some(message) = self.heads[i].take() else {
                continue;
            };
            match self.sources[i].next() {
                Some(Ok(next)) => {
                    self.heap.push(Reverse((next.log_time_ns, i)));
                    self.heads[i] = Some(next);
                }
                Some(Err(error)) => self.pending = Some(error),
                None => {}
            }
            return Some(Ok((i, message)));
        }
    }
}
