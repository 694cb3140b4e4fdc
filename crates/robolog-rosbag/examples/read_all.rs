//! Reads every message of a bag, a number of times, and prints the message count and bytes:
//! a minimal full read for profilers (`valgrind --tool=callgrind`, `perf`).
//!
//! ```text
//! cargo run --release -p robolog-rosbag --example read_all -- <bag> [time|file] [repeats] [threads] [iter|lend]
//! ```
//!
//! `lend` reads with `Messages::next_ref` instead of iterating. The file is memory-mapped, as
//! the `rosbag` crate maps it; with ROBOLOG_PREAD set it is read by position instead (what
//! `Bag::from_file` does).

#![allow(clippy::print_stdout)]

use robolog_rosbag::{Bag, Input, Order};

/// Opens the bag at `path` as the environment asks.
fn open(path: &str) -> Result<Bag, Box<dyn std::error::Error>> {
    if std::env::var_os("ROBOLOG_PREAD").is_some() {
        return Ok(Bag::from_file(path)?);
    }
    // SAFETY: a profiling run over a file nothing else writes meanwhile.
    #[allow(unsafe_code)]
    let input = unsafe { Input::map(path) }?;
    Ok(Bag::open(input)?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: read_all <bag> [time|file] [repeats] [threads] [iter|lend]")?;
    let order = match args.next().as_deref() {
        None | Some("time") => Order::LogTime,
        Some("file") => Order::File,
        Some(other) => return Err(format!("unknown order {other}").into()),
    };
    let repeats: usize = args.next().map_or(Ok(1), |s| s.parse())?;
    let threads: Option<usize> = args.next().map(|s| s.parse()).transpose()?;
    let lend = match args.next().as_deref() {
        None | Some("iter") => false,
        Some("lend") => true,
        Some(other) => return Err(format!("unknown mode {other}").into()),
    };
    let (mut count, mut bytes) = (0usize, 0usize);
    // With ROBOLOG_OPEN_ONCE set, the file is opened once (no page faults after the first
    // round), to tell the reader's own cost from the operating system's.
    let once = match std::env::var_os("ROBOLOG_OPEN_ONCE") {
        Some(_) => Some(open(&path)?),
        None => None,
    };
    for _ in 0..repeats {
        let bag = match &once {
            Some(bag) => bag.clone(),
            None => open(&path)?,
        };
        let mut query = bag.messages().order(order);
        if let Some(threads) = threads {
            query = query.threads(threads);
        }
        if lend {
            let mut messages = query.iter();
            while let Some(message) = messages.next_ref() {
                count += 1;
                bytes += message?.data.len();
            }
        } else {
            for message in query {
                let message = message?;
                count += 1;
                bytes += message.data.len();
            }
        }
    }
    println!("{count} messages, {bytes} bytes");
    Ok(())
}
