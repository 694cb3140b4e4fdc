//! The hidden subcommands that run in child processes, one measured thing per process, so that
//! each reports its own peak memory (`VmHWM` from `/proc/self/status`, Linux only).
//!
//! `bench-run` times one operation on one side; `bench-limit` measures a machine limit (memcpy
//! bandwidth, or the C libraries decompressing a file's chunks). Each prints one JSON line.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::files::Variant;
use super::limits;
use super::ops::{self, Context, Op, Recording, Side};
use super::workload::workloads;

/// Arguments of `robolog-bench bench-run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Workload name (`W1`, `W2`, `W3`).
    #[arg(long)]
    workload: String,
    /// The quick workloads.
    #[arg(long)]
    quick: bool,
    /// `mcap-lz4`, `bag-bz2`, …
    #[arg(long)]
    variant: String,
    #[arg(long, value_enum)]
    op: Op,
    #[arg(long, value_enum)]
    side: Side,
    /// The workload file.
    #[arg(long)]
    input: PathBuf,
    /// The workload's uncompressed MCAP file, the source of the messages `write` writes
    /// (generated in memory when absent).
    #[arg(long)]
    source: Option<PathBuf>,
    /// Scratch output for `write` and `convert`.
    #[arg(long)]
    output: PathBuf,
    /// Most repetitions.
    #[arg(long, default_value_t = 8)]
    max_reps: usize,
    /// Repeat only while the total time stays under this many seconds.
    #[arg(long, default_value_t = 0.4)]
    budget: f64,
}

/// What `bench-run` reports.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct RunReport {
    /// Seconds per repetition, the first one included.
    pub(crate) times: Vec<f64>,
    /// CPU seconds of the whole process (every thread) per repetition.
    pub(crate) cpu: Vec<f64>,
    pub(crate) messages: u64,
    pub(crate) bytes: u64,
    pub(crate) memory: Memory,
}

/// Peak memory of the operation, above what the process held before it started.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(crate) struct Memory {
    /// `VmHWM` (reset when the operation starts) minus `VmRSS` at the start, in bytes. It
    /// includes the pages of memory-mapped input files that were touched.
    pub(crate) peak_rss: u64,
    /// The largest anonymous resident memory seen (statm resident − shared, sampled every
    /// 2 ms), minus the same at the start, in bytes: heap, stacks, decode buffers.
    pub(crate) peak_anon: u64,
}

pub(crate) fn run(args: &RunArgs) -> Result<(), String> {
    let all = workloads(args.quick);
    let workload = all
        .iter()
        .find(|w| w.name == args.workload)
        .ok_or_else(|| format!("no workload {}", args.workload))?;
    let variant =
        Variant::parse(&args.variant).ok_or_else(|| format!("no variant {}", args.variant))?;
    let recording = if args.op == Op::Write {
        Some(match &args.source {
            Some(path) => Recording::load(workload, path)
                .map_err(|e| format!("loading {}: {e}", path.display()))?,
            None => Recording::generate(workload),
        })
    } else {
        None
    };
    let cx = Context {
        workload,
        variant,
        input: &args.input,
        output: &args.output,
        recording: recording.as_ref(),
    };
    let meter = Meter::start();
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut totals = None;
    let started = Instant::now();
    while times.is_empty()
        || (times.len() < args.max_reps && started.elapsed().as_secs_f64() < args.budget)
    {
        let t = Instant::now();
        let c = cpu_seconds();
        let result = ops::run(args.op, args.side, &cx)?;
        times.push(t.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c);
        let _ = fs::remove_file(&args.output);
        if totals.is_some_and(|t| t != result) {
            return Err(format!("repetitions disagree: {totals:?} then {result:?}"));
        }
        totals = Some(result);
    }
    let memory = meter.stop();
    let totals = totals.unwrap_or_default();
    print_json(&RunReport {
        times,
        cpu,
        messages: totals.messages,
        bytes: totals.bytes,
        memory,
    })
}

/// CPU time of the process: every thread, including threads that have exited.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

pub(crate) fn print_json(value: &impl Serialize) -> Result<(), String> {
    let line = serde_json::to_string(value).map_err(|e| e.to_string())?;
    println!("{line}");
    Ok(())
}

/// Arguments of `robolog-bench bench-limit`.
#[derive(Debug, clap::Args)]
pub(crate) struct LimitArgs {
    /// Measure memcpy bandwidth instead of decompression.
    #[arg(long)]
    memcpy: bool,
    /// The workload file whose chunks are decompressed.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Its variant.
    #[arg(long)]
    variant: Option<String>,
    /// Most repetitions per decoder (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Repeat a decoder only while its total time stays under this many seconds.
    #[arg(long, default_value_t = 3.0)]
    budget: f64,
}

pub(crate) fn limit(args: &LimitArgs) -> Result<(), String> {
    let report = if args.memcpy {
        limits::memcpy(args.reps)
    } else {
        let input = args.input.as_ref().ok_or("--input is required")?;
        let name = args.variant.as_deref().ok_or("--variant is required")?;
        let variant = Variant::parse(name).ok_or_else(|| format!("no variant {name}"))?;
        limits::decompress(variant, input, args.reps, args.budget)?
    };
    print_json(&report)
}

/// Samples the process's memory while an operation runs.
struct Meter {
    start_rss: u64,
    start_anon: u64,
    stop: Arc<AtomicBool>,
    sampler: thread::JoinHandle<u64>,
}

const PAGE: u64 = 4096;

/// (resident, anonymous resident) bytes from `/proc/self/statm`.
fn statm() -> (u64, u64) {
    let text = fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let fields: Vec<u64> = text
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    match fields.as_slice() {
        [_, resident, shared, ..] => (resident * PAGE, resident.saturating_sub(*shared) * PAGE),
        _ => (0, 0),
    }
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_field(name: &str) -> u64 {
    let text = fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

impl Meter {
    fn start() -> Self {
        // "5" resets VmHWM to the current RSS (Linux 4.0+), so that the peak is the operation's.
        let _ = fs::write("/proc/self/clear_refs", "5");
        let start_rss = status_field("VmRSS");
        let (_, start_anon) = statm();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let sampler = thread::spawn(move || {
            let mut peak = 0;
            while !flag.load(Ordering::Relaxed) {
                peak = peak.max(statm().1);
                thread::sleep(Duration::from_millis(2));
            }
            peak.max(statm().1)
        });
        Self {
            start_rss,
            start_anon,
            stop,
            sampler,
        }
    }

    fn stop(self) -> Memory {
        self.stop.store(true, Ordering::Relaxed);
        let peak_anon = self.sampler.join().unwrap_or(0);
        Memory {
            peak_rss: status_field("VmHWM").saturating_sub(self.start_rss),
            peak_anon: peak_anon.saturating_sub(self.start_anon),
        }
    }
}
