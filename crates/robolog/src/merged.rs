//! Several logs read as one stream of messages in log-time order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Error, Result};
use crate::log::{Log, Messages};
use crate::model::Message;
use crate::query::{Filter, Order};

/// The messages of several logs in log-time order; equal times come from the earlier input
/// first, then in file order. Each item says which input (its index) the message is from.
///
/// Memory holds one message per input beside what each input's query holds. A read error is
/// yielded (marked with its input, [`Error::InInput`](crate::Error::InInput)) and that input
/// goes on with whatever its own iterator gives next, as [`crate::merge`] with `keep_going`
/// does.
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
    /// Inputs whose next message is still to be read, the one to read first last.
    to_read: Vec<usize>,
}

impl std::fmt::Debug for MergedMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedMessages")
            .field("inputs", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl MergedMessages {
    /// Starts reading the messages of `logs` that `filter` selects, in log-time order. Fails on
    /// an invalid topic pattern; read errors come from the iterator.
    pub fn new(logs: &[&Log], filter: &Filter) -> Result<Self> {
        let sources: Vec<Messages> = logs
            .iter()
            .enumerate()
            .map(|(i, log)| {
                log.messages()
                    .filter(filter.clone())
                    .order(Order::LogTime)
                    .iter()
                    .map_err(|e| e.in_input(i))
            })
            .collect::<Result<_>>()?;
        Ok(MergedMessages {
            heads: (0..sources.len()).map(|_| None).collect(),
            heap: BinaryHeap::with_capacity(sources.len()),
            to_read: (0..sources.len()).rev().collect(),
            sources,
        })
    }

    /// The next message, or a read error with the input it came from (unmarked, for callers
    /// that report damage per input).
    pub(crate) fn next_or_damage(
        &mut self,
    ) -> Option<std::result::Result<(usize, Message), (usize, Error)>> {
        // One input is in order already: no heap to go through.
        if let [only] = self.sources.as_mut_slice() {
            return Some(only.next()?.map(|m| (0, m)).map_err(|e| (0, e)));
        }
        while let Some(i) = self.to_read.pop() {
            match self.sources[i].next() {
                Some(Ok(next)) => {
                    self.heap.push(Reverse((next.log_time_ns, i)));
                    self.heads[i] = Some(next);
                }
                Some(Err(error)) => {
                    self.to_read.push(i);
                    return Some(Err((i, error)));
                }
                None => {}
            }
        }
        let Reverse((_, i)) = self.heap.pop()?;
        let message = self.heads[i].take()?;
        self.to_read.push(i);
        Some(Ok((i, message)))
    }
}

impl Iterator for MergedMessages {
    type Item = Result<(usize, Message)>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.next_or_damage()?
                .map_err(|(i, error)| error.in_input(i)),
        )
    }
}
