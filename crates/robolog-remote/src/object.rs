//! A remote object as a [`ReadAt`] source: reads inside what was fetched already (the tail
//! fetched when it was opened, small reads, the spans a query announced) are slices; the spans
//! a query announces are fetched ahead, neighbours together, a bounded number and amount at a
//! time; any other read is one ranged GET.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use object_store::GetRange;
use robolog_framing::Bytes;
use robolog_query::{COALESCE_GAP, ReadAt};
use tokio::runtime::Handle;

use crate::client::{Client, Runtime, block_on};

/// Announced ranges closer than this are fetched by one request.
const GAP: u64 = COALESCE_GAP;

/// Neighbouring ranges are joined into spans of at most this many bytes (a single range may be
/// larger): spans this size are fetched in parallel rather than one after another.
const MAX_SPAN: u64 = 4 << 20;

/// Requests of announced spans in flight at once.
pub(crate) const MAX_IN_FLIGHT: usize = 4;

/// Bytes of announced spans held at once: fetched or being fetched, ahead of the reader or
/// kept behind it. What a stream or a query costs in memory, whatever the object's size.
const MAX_HELD: u64 = 16 << 20;

/// Spans kept after the reader has moved past them, at most this many and this many bytes:
/// a query's workers read a few chunks at once, not strictly in order.
const KEEP_BEHIND: usize = 8;
const KEEP_BEHIND_BYTES: u64 = 8 << 20;

/// A read of fewer bytes than this (outside what was fetched) fetches this many: the reads of
/// a file's first bytes (format detection, then its header) or of a record's length and then
/// its body are one request.
const MIN_FETCH: u64 = 16 << 10;

/// Reads of at most this many bytes are kept, up to [`SMALL_CACHE`] bytes in all.
const SMALL_READ: u64 = 1 << 20;
const SMALL_CACHE: u64 = 16 << 20;

#[derive(Debug)]
enum Slot {
    Waiting,
    Loading,
    Ready(Bytes),
    /// Failed or let go: a read of it is a request of its own.
    Gone,
}

#[derive(Debug)]
struct Span {
    range: Range<u64>,
    slot: Slot,
}

#[derive(Debug, Default)]
struct State {
    /// Fetched ranges kept (the tail, small reads), by start, oldest first in `order`.
    kept: BTreeMap<u64, Bytes>,
    order: VecDeque<u64>,
    kept_bytes: u64,
    /// The spans of the latest announcement, in the order they will be read.
    plan: Vec<Span>,
    /// `(start, index)` of the plan's spans, by start.
    by_start: Vec<(u64, usize)>,
    /// Bumped by each announcement: fetches of an older plan finish without touching this one.
    generation: u64,
    /// The next span of the plan to start.
    next: usize,
    /// The furthest span read, and the first not yet let go.
    cursor: usize,
    released: usize,
    in_flight: usize,
    /// Bytes of Loading and Ready spans.
    held: u64,
}

impl State {
    fn kept(&self, range: &Range<u64>) -> Option<Bytes> {
        let (&start, bytes) = self.kept.range(..=range.start).next_back()?;
        let end = start + bytes.len() as u64;
        (range.end <= end)
            .then(|| bytes.slice((range.start - start) as usize..(range.end - start) as usize))
    }

    fn keep(&mut self, start: u64, bytes: Bytes, cap: u64) {
        let len = bytes.len() as u64;
        if let Some(old) = self.kept.insert(start, bytes) {
            self.kept_bytes -= old.len() as u64;
            self.order.retain(|&s| s != start);
        }
        self.kept_bytes += len;
        self.order.push_back(start);
        while self.kept_bytes > cap
            && let Some(oldest) = self.order.pop_front()
        {
            if let Some(old) = self.kept.remove(&oldest) {
                self.kept_bytes -= old.len() as u64;
            }
        }
    }

    /// The kept range holding byte `at`, as `start..end`.
    fn kept_around(&self, at: u64) -> Option<Range<u64>> {
        let (&start, bytes) = self.kept.range(..=at).next_back()?;
        let end = start + bytes.len() as u64;
        (at < end).then_some(start..end)
    }

    /// `range` without what is kept already at either end (`None` when that is all of it):
    /// announcing a stream of an object does not fetch its tail and first bytes again.
    fn not_kept(&self, mut range: Range<u64>) -> Option<Range<u64>> {
        while range.start < range.end {
            if let Some(kept) = self.kept_around(range.start) {
                range.start = kept.end.min(range.end);
            } else if let Some(kept) = self.kept_around(range.end - 1) {
                range.end = kept.start.max(range.start);
            } else {
                return Some(range);
            }
        }
        None
    }

    /// `range` cut where what holds its bytes changes (a kept range, a span of the plan,
    /// neither), so that each part is read from one place.
    fn parts(&self, range: &Range<u64>) -> Vec<Range<u64>> {
        let mut parts = Vec::new();
        let mut at = range.start;
        while at < range.end {
            let end = if let Some(kept) = self.kept_around(at) {
                kept.end
            } else if let Some(i) = self.span_of(&(at..at + 1))
                && !matches!(self.plan[i].slot, Slot::Gone)
            {
                self.plan[i].range.end
            } else {
                // Up to where a kept range or a span not let go begins.
                let kept = self.kept.range(at + 1..).next().map(|(&s, _)| s);
                let after = self.by_start.partition_point(|&(s, _)| s <= at);
                let span = self.by_start[after..]
                    .iter()
                    .find(|&&(_, i)| !matches!(self.plan[i].slot, Slot::Gone))
                    .map(|&(s, _)| s);
                kept.into_iter().chain(span).fold(range.end, u64::min)
            };
            let end = end.min(range.end);
            parts.push(at..end);
            at = end;
        }
        parts
    }

    /// The span of the plan holding all of `range`.
    fn span_of(&self, range: &Range<u64>) -> Option<usize> {
        let after = self.by_start.partition_point(|&(s, _)| s <= range.start);
        let &(_, i) = self.by_start.get(after.checked_sub(1)?)?;
        (range.end <= self.plan[i].range.end).then_some(i)
    }

    /// The reader got to span `i`: the oldest spans behind it are let go, down to
    /// [`KEEP_BEHIND`] spans and [`KEEP_BEHIND_BYTES`].
    fn passed(&mut self, i: usize) {
        self.cursor = self.cursor.max(i);
        let ready = |slot: &Slot| match slot {
            Slot::Ready(bytes) => bytes.len() as u64,
            _ => 0,
        };
        let mut behind: u64 = self.plan[self.released..self.cursor]
            .iter()
            .map(|span| ready(&span.slot))
            .sum();
        while self.released < self.cursor
            && (self.cursor - self.released > KEEP_BEHIND || behind > KEEP_BEHIND_BYTES)
        {
            let span = &mut self.plan[self.released];
            let len = ready(&span.slot);
            if len > 0 {
                self.held -= len;
                behind -= len;
                span.slot = Slot::Gone;
            }
            self.released += 1;
        }
    }
}

#[derive(Debug)]
struct Shared {
    client: Client,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A remote object read by position.
#[derive(Debug)]
pub(crate) struct Object {
    shared: Arc<Shared>,
    runtime: Arc<Runtime>,
    len: u64,
}

impl Object {
    /// The object of `client`, `len` bytes long, whose bytes from `tail_at` on are `tail`.
    pub(crate) fn new(
        client: Client,
        runtime: Arc<Runtime>,
        len: u64,
        tail_at: u64,
        tail: Bytes,
    ) -> Self {
        let mut state = State::default();
        if !tail.is_empty() {
            // Kept for the object's whole life: readers come back to the summary.
            state.keep(tail_at, tail, u64::MAX);
        }
        Self {
            shared: Arc::new(Shared {
                client,
                state: Mutex::new(state),
                changed: Condvar::new(),
            }),
            runtime,
            len,
        }
    }

    /// Starts the next spans of the plan while the bounds allow.
    fn pump(&self, state: &mut State) {
        if let Some(handle) = self.runtime.handle() {
            pump(&self.shared, handle, state);
        }
    }

    /// Starts fetching span `i` of the plan.
    fn start(&self, state: &mut State, i: usize) {
        if let Some(handle) = self.runtime.handle() {
            start(&self.shared, handle, state, i);
        }
    }

    /// Fetches `range`, for a read of `wanted` (within it; named by errors).
    fn fetch(&self, range: Range<u64>, wanted: &Range<u64>) -> io::Result<Bytes> {
        let client = self.shared.client.clone();
        let asked = range.clone();
        let got = block_on(&self.runtime, async move {
            client.get(GetRange::Bounded(asked)).await
        })?;
        match got {
            Ok((bytes, got, _)) if got == range => Ok(bytes),
            Ok((_, got, _)) => Err(io::Error::other(format!(
                "{}: asked for bytes {}..{}, the server sent {}..{}",
                self.shared.client.url, range.start, range.end, got.start, got.end
            ))),
            Err(e) => Err(self
                .shared
                .client
                .io_error(&format!("bytes {}..{}", wanted.start, wanted.end), e)),
        }
    }
}

/// Starts the next spans of the plan while the bounds allow (called as reads pass spans and
/// as fetches end).
fn pump(shared: &Arc<Shared>, handle: &Handle, state: &mut State) {
    while state.next < state.plan.len() && state.in_flight < MAX_IN_FLIGHT && state.held < MAX_HELD
    {
        let i = state.next;
        state.next += 1;
        if matches!(state.plan[i].slot, Slot::Waiting) {
            start(shared, handle, state, i);
        }
    }
}

/// Starts fetching span `i` of the plan.
fn start(shared: &Arc<Shared>, handle: &Handle, state: &mut State, i: usize) {
    let span = &mut state.plan[i];
    span.slot = Slot::Loading;
    let range = span.range.clone();
    state.in_flight += 1;
    state.held += range.end - range.start;
    let generation = state.generation;
    let task_shared = Arc::clone(shared);
    let task_handle = handle.clone();
    handle.spawn(async move {
        let shared = task_shared;
        let got = shared.client.get(GetRange::Bounded(range)).await;
        let mut state = shared.lock();
        state.in_flight -= 1;
        let released = state.released;
        if state.generation == generation
            && let Some(span) = state.plan.get_mut(i)
        {
            let len = span.range.end - span.range.start;
            match got {
                // Kept unless the reader has gone past it meanwhile.
                Ok((bytes, got, _)) if i >= released && got == span.range => {
                    span.slot = Slot::Ready(bytes);
                }
                // A failed fetch is read again by the read that needs it, which reports the
                // error if it persists.
                _ => {
                    span.slot = Slot::Gone;
                    state.held -= len;
                }
            }
        }
        pump(&shared, &task_handle, &mut state);
        drop(state);
        shared.changed.notify_all();
    });
}

/// Joins neighbouring ranges of `ranges` (in the order they will be read) into spans.
pub(crate) fn spans(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges {
        if let Some(last) = out.last_mut() {
            let joined = if r.start >= last.end && r.start - last.end <= GAP {
                last.start..r.end
            } else if r.end <= last.start && last.start - r.end <= GAP {
                r.start..last.end
            } else {
                0..u64::MAX
            };
            if joined.end - joined.start <= MAX_SPAN {
                *last = joined;
                continue;
            }
        }
        out.push(r.clone());
    }
    out
}

impl ReadAt for Object {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, range: Range<u64>) -> io::Result<Bytes> {
        let mut state = self.shared.lock();
        loop {
            if let Some(bytes) = state.kept(&range) {
                return Ok(bytes);
            }
            let Some(i) = state.span_of(&range) else {
                break;
            };
            match &state.plan[i].slot {
                Slot::Ready(bytes) => {
                    let start = state.plan[i].range.start;
                    let bytes =
                        bytes.slice((range.start - start) as usize..(range.end - start) as usize);
                    state.passed(i);
                    self.pump(&mut state);
                    return Ok(bytes);
                }
                Slot::Waiting => {
                    self.start(&mut state, i);
                    self.pump(&mut state);
                }
                Slot::Loading => {
                    state = self
                        .shared
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Slot::Gone => break,
            }
        }
        let parts = state.parts(&range);
        drop(state);
        if parts.len() > 1 {
            // Across a span and a kept range (a stream's first or last piece, say): each part
            // from where it is, copied together.
            let mut joined = Vec::with_capacity((range.end - range.start) as usize);
            for part in parts {
                joined.extend_from_slice(&self.read_at(part)?);
            }
            return Ok(Bytes::from(joined));
        }
        let end = range
            .end
            .max(range.start.saturating_add(MIN_FETCH).min(self.len));
        let bytes = self.fetch(range.start..end, &range)?;
        if end - range.start <= SMALL_READ {
            self.shared
                .lock()
                .keep(range.start, bytes.clone(), SMALL_CACHE);
        }
        Ok(bytes.slice(..(range.end - range.start) as usize))
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        let mut state = self.shared.lock();
        let ranges: Vec<Range<u64>> = ranges
            .iter()
            .filter_map(|r| state.not_kept(r.clone()))
            .collect();
        let spans = spans(&ranges);
        state.generation += 1;
        state.plan = spans
            .into_iter()
            .map(|range| Span {
                range,
                slot: Slot::Waiting,
            })
            .collect();
        let mut by_start: Vec<(u64, usize)> = state
            .plan
            .iter()
            .enumerate()
            .map(|(i, s)| (s.range.start, i))
            .collect();
        by_start.sort_unstable();
        state.by_start = by_start;
        state.next = 0;
        state.cursor = 0;
        state.released = 0;
        state.held = 0;
        self.pump(&mut state);
    }
}

#[cfg(test)]
// One span expected is written as a one-element array of ranges, which is what it is.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_joined_in_either_direction_up_to_a_span_limit() {
        let mb = 1 << 20;
        assert_eq!(
            spans(&[0..10, 20..30, GAP + 100..GAP + 200, 10 * mb..11 * mb]),
            [0..30, GAP + 100..GAP + 200, 10 * mb..11 * mb]
        );
        // Read in reverse order: joined all the same.
        assert_eq!(spans(&[40..50, 0..10]), [0..50]);
        // Two ranges that would make a span too large to fetch in parallel stay apart.
        assert_eq!(
            spans(&[0..6 * mb, 6 * mb..12 * mb]),
            [0..6 * mb, 6 * mb..12 * mb]
        );
        assert_eq!(spans(&[0..20 * mb]), [0..20 * mb]);
    }

    /// A state that keeps an object's first 16 KiB and its last 192 KiB (of 1,200 KiB), as
    /// after it was opened and its format told, with `plan` announced.
    fn opened(plan: &[Range<u64>]) -> State {
        let kib = 1 << 10;
        let mut state = State::default();
        state.keep(0, Bytes::from(vec![0; 16 * kib]), u64::MAX);
        state.keep(1008 * kib as u64, Bytes::from(vec![0; 192 * kib]), u64::MAX);
        state.plan = plan
            .iter()
            .map(|range| Span {
                range: range.clone(),
                slot: Slot::Waiting,
            })
            .collect();
        state.by_start = plan.iter().enumerate().map(|(i, r)| (r.start, i)).collect();
        state
    }

    #[test]
    fn what_is_kept_is_not_announced_again() {
        let kib = 1 << 10;
        let state = opened(&[]);
        assert_eq!(state.not_kept(0..1200 * kib), Some(16 * kib..1008 * kib));
        assert_eq!(state.not_kept(8 * kib..20 * kib), Some(16 * kib..20 * kib));
        assert_eq!(
            state.not_kept(1000 * kib..1100 * kib),
            Some(1000 * kib..1008 * kib)
        );
        assert_eq!(state.not_kept(0..10), None);
        assert_eq!(state.not_kept(1100 * kib..1200 * kib), None);
        assert_eq!(state.not_kept(100..100), None);
    }

    #[test]
    fn a_read_across_kept_bytes_and_spans_is_cut_where_they_meet() {
        let kib = 1 << 10;
        let mut state = opened(&[16 * kib..500 * kib, 600 * kib..1008 * kib]);
        assert_eq!(
            state.parts(&(0..1200 * kib)),
            [
                0..16 * kib,
                16 * kib..500 * kib,
                500 * kib..600 * kib,
                600 * kib..1008 * kib,
                1008 * kib..1200 * kib
            ]
        );
        assert_eq!(state.parts(&(100..200)), [100..200]);
        // A span let go is read as bytes of no span, up to where the next begins.
        state.plan[1].slot = Slot::Gone;
        assert_eq!(
            state.parts(&(400 * kib..1100 * kib)),
            [
                400 * kib..500 * kib,
                500 * kib..1008 * kib,
                1008 * kib..1100 * kib
            ]
        );
    }

    #[test]
    fn spans_behind_the_reader_are_let_go_by_count_and_bytes() {
        let mb = 1 << 20;
        let mut state = State {
            plan: (0..12u64)
                .map(|i| Span {
                    range: i * 4 * mb..(i + 1) * 4 * mb,
                    slot: Slot::Ready(Bytes::from(vec![0; 4 << 20])),
                })
                .collect(),
            held: 12 * 4 * mb,
            ..State::default()
        };
        state.passed(5);
        // Four megabytes each: two behind the reader are kept (8 MiB), the rest let go.
        assert_eq!(state.released, 3);
        assert!(state.plan[..3].iter().all(|s| matches!(s.slot, Slot::Gone)));
        assert!(
            state.plan[3..]
                .iter()
                .all(|s| matches!(s.slot, Slot::Ready(_)))
        );
        assert_eq!(state.held, 9 * 4 * mb);
    }
}
