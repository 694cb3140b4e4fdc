//! robolog's benchmark (`cargo xtask bench [--quick]`, which runs this program in release mode):
//! robolog against the `mcap` and `rosbag` crates on the same synthetic files, in one run, with the
//! machine's limits measured on the same data.
//!
//! The parent process generates (or finds cached) workload files, then runs every measured
//! operation in a child process (`robolog-bench bench-run`, hidden) so that each reports its own
//! peak memory. Ours and the peer alternate, round after round, and the table shows medians.
//!
//! A package of its own, not a module of xtask: the peers, the C codecs and the robolog crates
//! with the benchmark's features are built only by those who benchmark, and `cargo xtask` (every
//! CI step that generates or checks code) stays a small build.

// The benchmark maps its input files, as the peers do (`ops`); nothing else is unsafe.
#![deny(unsafe_code)]
#![allow(clippy::print_stderr, clippy::print_stdout)]

mod child;
mod columnar;
// xtask's: cargo started without the variables `cargo run` set for this program.
#[path = "../../xtask/src/commands.rs"]
mod commands;
mod convert;
mod decoding;
mod files;
mod limits;
mod machine;
mod ops;
mod process;
mod workload;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use child::{LimitArgs, RunArgs};
use commands::{cargo, run};
use files::{DataFile, Totals, Variant};
use limits::Limit;
use ops::{Op, Side};
use workload::{Workload, workloads};

/// The benchmark's tasks.
#[derive(clap::Parser)]
#[command(about = "robolog's benchmark (run it with `cargo xtask bench`)")]
enum Task {
    /// Benchmark robolog against the mcap and rosbag crates (release build; see BENCHMARKS.md).
    Bench(BenchArgs),
    /// One measured operation in a child process (used by `bench`).
    #[command(hide = true)]
    BenchRun(RunArgs),
    /// One machine-limit measurement in a child process (used by `bench`).
    #[command(hide = true)]
    BenchLimit(LimitArgs),
    /// Decode every message of a log with the facade (the baseline of `bench --columnar`).
    #[command(hide = true)]
    BenchDecode {
        /// The log.
        input: PathBuf,
    },
}

fn main() -> ExitCode {
    let result = match <Task as clap::Parser>::parse() {
        Task::Bench(args) => bench(&workspace_root(), &args),
        Task::BenchRun(args) => child::run(&args),
        Task::BenchLimit(args) => child::limit(&args),
        Task::BenchDecode { input } => columnar::decode_all(&input),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("robolog-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR"));
    bench.parent().unwrap_or(bench).to_path_buf()
}

/// Builds the `robolog` binary in release mode (with its default features, as users install
/// it) and returns its path: the command-line rows of `--decoding` and `--columnar` run it.
fn release_robolog(root: &Path) -> Result<PathBuf, String> {
    run(cargo(root).args(["build", "--release", "--quiet", "-p", "robolog-cli"]))?;
    // Where cargo put it: `CARGO_TARGET_DIR` (relative to the workspace) when set.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), |dir| root.join(dir));
    Ok(target.join("release/robolog"))
}

/// Arguments of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// Smaller workloads and fewer rounds: finishes in under 3 minutes on 2 cores.
    #[arg(long)]
    quick: bool,
    /// Only these workloads (W1, W2, W3).
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Only these files (mcap-none, mcap-lz4, mcap-zstd, bag-none, bag-lz4, bag-bz2).
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Only these operations.
    #[arg(long, value_delimiter = ',', value_enum)]
    ops: Vec<Op>,
    /// Rounds per operation; each runs robolog and the peer once, alternating which goes first
    /// (default 3).
    #[arg(long)]
    rounds: Option<usize>,
    /// Stop measuring after this many minutes: the remaining rows are listed as not measured
    /// (files are measured uncompressed, LZ4, zstd first and bzip2, the slowest, last).
    #[arg(long)]
    time_limit: Option<f64>,
    /// Also write the report (markdown) to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Measure message decoding instead of the files: ROS 2 decoding against a hand-written
    /// decoder and rosbags, and `cat --json --decode` against the `mcap` CLI (whose path is
    /// `ROBOLOG_BENCH_MCAP_CLI`); see `bench/decoding.rs`.
    #[arg(long)]
    decoding: bool,
    /// Measure Parquet export and SQL instead of the files: `robolog export` against
    /// transmcap (whose path is `ROBOLOG_BENCH_TRANSMCAP`) and against decoding the same
    /// messages, `robolog sql` over a short time range of two logs; see `bench/columnar.rs`.
    #[arg(long, conflicts_with = "decoding")]
    columnar: bool,
}

/// Runs the benchmark; in a debug build, rebuilds and re-runs itself in release mode first.
pub(crate) fn bench(root: &Path, args: &BenchArgs) -> Result<(), String> {
    if cfg!(debug_assertions) {
        let passed: Vec<String> = std::env::args().skip(1).collect();
        return run(cargo(root)
            .args([
                "run",
                "--release",
                "--quiet",
                "--package",
                "robolog-bench",
                "--",
            ])
            .args(passed));
    }
    if args.decoding || args.columnar {
        let report = if args.decoding {
            decoding::run(root, args.quick)?
        } else {
            columnar::run(root, args.quick)?
        };
        println!("{report}");
        if let Some(out) = &args.out {
            std::fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        return Ok(());
    }
    let started = Instant::now();
    let load_before = machine::load_average();
    let all = workloads(args.quick);
    let chosen: Vec<Workload> = all
        .iter()
        .filter(|w| args.workloads.is_empty() || args.workloads.iter().any(|n| n == w.name))
        .cloned()
        .collect();
    let mut variants = Vec::new();
    for name in &args.variants {
        variants.push(Variant::parse(name).ok_or_else(|| format!("unknown file kind {name}"))?);
    }
    if variants.is_empty() {
        variants = Variant::ALL.to_vec();
    }
    let ops = if args.ops.is_empty() {
        Op::ALL.to_vec()
    } else {
        args.ops.clone()
    };
    let dir = root.join("target/bench-data");
    let data = files::prepare(&dir, &chosen, &variants)?;
    let scratch = dir.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let expected: Vec<(Totals, Totals)> = chosen
        .iter()
        .map(|w| files::expected_cached(&dir, w))
        .collect::<Result<_, _>>()?;

    eprintln!("bench: measuring memcpy and the codecs' limits");
    let memcpy: Limit = limit(&["--memcpy"])?;
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let rounds = args.rounds.unwrap_or(3).max(1);
    // bzip2 files last: they take most of the time, and a time limit should cut them first.
    let mut order: Vec<&DataFile> = data.iter().collect();
    order.sort_by_key(|f| {
        let bz2 = f.variant.codec() == robolog_framing::Compression::Bz2;
        (bz2, if bz2 { f.file_bytes } else { 0 })
    });
    let out_of_time = |started: Instant| {
        args.time_limit
            .is_some_and(|minutes| started.elapsed().as_secs_f64() > minutes * 60.0)
    };
    let mut loads = Vec::new();
    for file in order {
        let workload = &chosen[file.workload];
        loads.push(machine::load_average());
        if out_of_time(started) {
            skipped.push(format!("{} {} (all)", workload.name, file.variant.name()));
            continue;
        }
        // Both sides read the file from the page cache: the first one to touch it must not pay
        // for the disk.
        warm(&file.path)?;
        let source = data
            .iter()
            .find(|f| {
                f.workload == file.workload
                    && f.variant == Variant::Mcap(robolog_framing::Compression::None)
            })
            .map(|f| f.path.clone());
        let raw: Limit = limit(&[
            "--input",
            &file.path.to_string_lossy(),
            "--variant",
            &file.variant.name(),
            "--reps",
            if args.quick { "3" } else { "5" },
            "--budget",
            if args.quick { "0.5" } else { "3" },
        ])?;
        for &op in ops.iter().filter(|op| op.applies_to(file.variant)) {
            if out_of_time(started) {
                skipped.push(format!(
                    "{} {} {}",
                    workload.name,
                    file.variant.name(),
                    op.arg()
                ));
                continue;
            }
            // This kind of virtual machine pages out memory nobody touched for a minute
            // (DAMON), page cache included; a bzip2 file's reads take longer than that, so the
            // source a write reads its messages from is read again just before.
            if let (Op::Write, Some(source)) = (op, &source) {
                warm(source)?;
            }
            let measured = measure(
                args,
                workload,
                file,
                source.as_deref(),
                op,
                rounds,
                &scratch,
            )?;
            let (all, query) = expected[file.workload];
            let want = match op {
                Op::Query => query,
                Op::Info => Totals {
                    messages: all.messages,
                    bytes: 0,
                },
                _ => all,
            };
            for (side, totals) in &measured.totals {
                if *totals != want {
                    return Err(format!(
                        "{} {side:?} on {} gave {totals:?}, the generator wrote {want:?}",
                        op.arg(),
                        file.path.display()
                    ));
                }
            }
            let row = Row {
                workload: workload.name,
                variant: file.variant,
                op,
                ours: measured.median(Side::Ours),
                peer: measured.median(Side::Peer),
                ours_cpu: measured.median_cpu(Side::Ours),
                peer_cpu: measured.median_cpu(Side::Peer),
                samples: measured.samples.get("ours").map_or(0, Vec::len),
                totals: want,
                raw,
                memcpy,
                memory: measured.memory,
                cores: measured.cores,
            };
            eprintln!("bench: {}", row.cells().join(" | "));
            rows.push(row);
        }
    }
    let variant_rank = |v: Variant| Variant::ALL.iter().position(|&a| a == v);
    let op_rank = |op: Op| Op::ALL.iter().position(|&o| o == op);
    rows.sort_by_key(|r| (r.workload, variant_rank(r.variant), op_rank(r.op)));
    let mut report = render(
        args,
        &chosen,
        &expected,
        &data,
        &memcpy,
        &rows,
        &load_before,
        started,
    );
    let _ = writeln!(
        report,
        "\nLoad average (1/5/15 min) as each file's measurements started: {}",
        loads.join("; ")
    );
    if !skipped.is_empty() {
        let _ = writeln!(
            report,
            "\nNot measured (the --time-limit ran out): {}",
            skipped.join(", ")
        );
    }
    print!("{report}");
    if let Some(out) = &args.out {
        std::fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// Reads `path` once, so that its pages are in the page cache.
fn warm(path: &Path) -> Result<(), String> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; 8 << 20];
    while file
        .read(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?
        > 0
    {}
    Ok(())
}

/// Runs `robolog-bench bench-limit` with `args` and parses its report.
fn limit(args: &[&str]) -> Result<Limit, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = Command::new(exe)
        .arg("bench-limit")
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    parse_child(&output)
}

fn parse_child<T: serde::de::DeserializeOwned>(output: &std::process::Output) -> Result<T, String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("child failed ({}): {stdout}", output.status));
    }
    let line = stdout.lines().last().ok_or("child printed nothing")?;
    serde_json::from_str(line).map_err(|e| format!("bad child report {line:?}: {e}"))
}

/// Both sides of one operation on one file.
struct Measured {
    samples: BTreeMap<&'static str, Vec<f64>>,
    /// CPU seconds per sample, same layout.
    cpu: BTreeMap<&'static str, Vec<f64>>,
    totals: Vec<(Side, Totals)>,
    memory: [Option<child::Memory>; 2],
    /// The fewest effective cores the probe found before each round and after the last.
    cores: f64,
}

impl Measured {
    fn median(&self, side: Side) -> Option<f64> {
        median(self.samples.get(side_name(side))?)
    }

    fn median_cpu(&self, side: Side) -> Option<f64> {
        median(self.cpu.get(side_name(side))?)
    }
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

impl Measured {}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Ours => "ours",
        Side::Peer => "peer",
    }
}

fn measure(
    args: &BenchArgs,
    workload: &Workload,
    file: &DataFile,
    source: Option<&Path>,
    op: Op,
    rounds: usize,
    scratch: &Path,
) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut sides = vec![Side::Ours];
    if op.has_peer(file.variant) {
        sides.push(Side::Peer);
    }
    let mut measured = Measured {
        samples: BTreeMap::new(),
        cpu: BTreeMap::new(),
        totals: Vec::new(),
        memory: [None, None],
        cores: f64::INFINITY,
    };
    let started = Instant::now();
    let op_budget = if args.quick { 3.0 } else { 20.0 };
    for round in 0..rounds {
        if !takes_round(round, started.elapsed().as_secs_f64(), op_budget) {
            break;
        }
        measured.cores = measured.cores.min(machine::effective_cores());
        let mut order = sides.clone();
        if round % 2 == 1 {
            order.reverse();
        }
        for side in order {
            let output = scratch.join(format!("out-{}-{}", std::process::id(), side_name(side)));
            let mut command = Command::new(&exe);
            command
                .arg("bench-run")
                .args(["--workload", workload.name])
                .args(["--variant", &file.variant.name()])
                .args(["--op", op.arg()])
                .args(["--side", side_name(side)])
                .arg("--input")
                .arg(&file.path)
                .arg("--output")
                .arg(&output)
                .stderr(Stdio::inherit());
            if args.quick {
                command.args(["--quick", "--max-reps", "4", "--budget", "0.2"]);
            }
            if let (Op::Write, Some(source)) = (op, source) {
                command.arg("--source").arg(source);
            }
            let output = command.output().map_err(|e| e.to_string())?;
            let report: child::RunReport = parse_child(&output)?;
            let mut times = report.times;
            let mut cpu = report.cpu;
            if times.len() > 1 {
                // The first repetition warmed the caches; keep it only when it is the only one.
                times.remove(0);
                cpu.remove(0);
            }
            measured.cpu.entry(side_name(side)).or_default().extend(cpu);
            measured
                .samples
                .entry(side_name(side))
                .or_default()
                .extend(times);
            let totals = Totals {
                messages: report.messages,
                bytes: report.bytes,
            };
            if round == 0 {
                measured.totals.push((side, totals));
            }
            let slot = &mut measured.memory[usize::from(side == Side::Peer)];
            let m = slot.get_or_insert(report.memory);
            m.peak_rss = m.peak_rss.max(report.memory.peak_rss);
            m.peak_anon = m.peak_anon.max(report.memory.peak_anon);
        }
    }
    measured.cores = measured.cores.min(machine::effective_cores());
    Ok(measured)
}

/// Whether an operation whose rounds so far took `spent` seconds gets round `round` (from 0).
/// Slow operations (bzip2 on the full workloads) get fewer rounds, at least two when the first
/// one fits in the budget, so that the run stays within its time.
fn takes_round(round: usize, spent: f64, budget: f64) -> bool {
    round == 0 || spent <= budget * (round as f64) / (round as f64 + 1.0)
}

/// What a row's target compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetKind {
    /// Our throughput against the peer crate's.
    PeerRatio,
    /// Our throughput against the machine's limit (memcpy, raw liblz4).
    Limit,
    /// Peak memory against the chunk size.
    Memory,
}

/// One of the targets as it applies to a row.
#[derive(Debug, Clone)]
struct Target {
    kind: TargetKind,
    /// How the report names it (`≥1.5× peer`, say).
    label: String,
    met: bool,
}

/// One line of the table.
struct Row {
    workload: &'static str,
    variant: Variant,
    op: Op,
    ours: Option<f64>,
    peer: Option<f64>,
    /// Median CPU seconds (all threads) of each side.
    ours_cpu: Option<f64>,
    peer_cpu: Option<f64>,
    /// robolog's timed repetitions behind the median.
    samples: usize,
    totals: Totals,
    /// The file's decompression limit (and chunk sizes).
    raw: Limit,
    memcpy: Limit,
    memory: [Option<child::Memory>; 2],
    /// The machine's fewest effective cores while the row was measured
    /// ([`Measured::cores`]).
    cores: f64,
}

/// robolog's peak anonymous memory must stay under this many times the file's largest chunk
/// (uncompressed) for the memory target: a fixed multiple, whatever the file size.
const MEMORY_CHUNKS: u64 = 16;

fn time(seconds: Option<f64>) -> String {
    match seconds {
        None => "—".into(),
        Some(s) if s < 0.01 => format!("{:.2} ms", s * 1e3),
        Some(s) if s < 1.0 => format!("{:.1} ms", s * 1e3),
        Some(s) => format!("{s:.2} s"),
    }
}

fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb < 10.0 {
        format!("{mb:.1}")
    } else {
        format!("{mb:.0}")
    }
}

fn memory(m: Option<child::Memory>) -> String {
    match m {
        None => "—".into(),
        Some(m) => format!("{} ({})", megabytes(m.peak_rss), megabytes(m.peak_anon)),
    }
}

fn codec_library(codec: robolog_framing::Compression) -> (&'static str, Option<&'static str>) {
    match codec {
        robolog_framing::Compression::None => ("memcpy", None),
        robolog_framing::Compression::Lz4 => ("liblz4", Some("lz4_flex")),
        robolog_framing::Compression::Zstd => ("libzstd", None),
        robolog_framing::Compression::Bz2 => ("libbz2", Some("bzip2 0.6")),
    }
}

impl Row {
    fn ratio(&self) -> Option<f64> {
        Some(self.peer? / self.ours?)
    }

    fn cpu_ratio(&self) -> Option<f64> {
        Some(self.peer_cpu? / self.ours_cpu?)
    }

    fn is_read(&self) -> bool {
        matches!(self.op, Op::ReadFile | Op::ReadTime)
    }

    /// The seconds the limit needs for this row's work: memcpy of the uncompressed chunk bytes,
    /// or the C library decoding every chunk; only full reads have one.
    fn limit_seconds(&self) -> Option<f64> {
        if !self.is_read() {
            return None;
        }
        Some(
            if self.variant.codec() == robolog_framing::Compression::None {
                self.raw.bytes as f64 / self.memcpy.bytes_per_second()
            } else {
                self.raw.seconds
            },
        )
    }

    fn fraction_of_limit(&self) -> Option<f64> {
        Some(self.limit_seconds()? / self.ours?)
    }

    /// The same against the second decoder measured: lz4_flex, the `bzip2` 0.6 crate.
    fn fraction_of_library(&self) -> Option<f64> {
        if !self.is_read() {
            return None;
        }
        Some(self.raw.library_seconds? / self.ours?)
    }

    fn memory_bound(&self) -> Option<u64> {
        (self.raw.largest_chunk > 0 && self.op != Op::Info)
            .then(|| MEMORY_CHUNKS * self.raw.largest_chunk)
    }

    /// The targets that apply to this row, each with whether it is met.
    fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        let mut push = |kind, label, met| targets.push(Target { kind, label, met });
        if matches!(self.op, Op::ReadFile | Op::ReadTime | Op::Query)
            && let Some(ratio) = self.ratio()
        {
            let want = if self.variant.is_bag() { 2.0 } else { 1.5 };
            push(
                TargetKind::PeerRatio,
                format!("≥{want}× peer"),
                ratio >= want,
            );
        }
        if let Some(fraction) = self.fraction_of_limit() {
            match self.variant.codec() {
                robolog_framing::Compression::None => {
                    push(TargetKind::Limit, "≥50% memcpy".into(), fraction >= 0.5);
                }
                robolog_framing::Compression::Lz4 => {
                    push(TargetKind::Limit, "≥70% liblz4".into(), fraction >= 0.7);
                }
                _ => {}
            }
        }
        if let (Some(bound), Some(m)) = (self.memory_bound(), self.memory[0]) {
            let label = format!("mem ≤{MEMORY_CHUNKS}× chunk");
            push(TargetKind::Memory, label, m.peak_anon <= bound);
        }
        targets
    }

    fn limit_cell(&self) -> String {
        let Some(fraction) = self.fraction_of_limit() else {
            return "—".into();
        };
        let (reference, library) = codec_library(self.variant.codec());
        let speed = if self.variant.codec() == robolog_framing::Compression::None {
            self.memcpy.bytes_per_second()
        } else {
            self.raw.bytes_per_second()
        };
        let mut cell = format!(
            "{:.0}% of {reference} {:.0} MB/s",
            fraction * 100.0,
            speed / 1e6
        );
        if let (Some(library), Some(f), Some(speed)) = (
            library,
            self.fraction_of_library(),
            self.raw.library_bytes_per_second(),
        ) {
            let _ = write!(
                cell,
                "; {:.0}% of {library} {:.0} MB/s",
                f * 100.0,
                speed / 1e6
            );
        }
        cell
    }

    fn cells(&self) -> Vec<String> {
        let per_second = |n: u64, scale: f64| match self.ours {
            Some(s) if self.op != Op::Info => format!("{:.0}", n as f64 / s / scale),
            _ => "—".into(),
        };
        let targets = self
            .targets()
            .into_iter()
            .map(|t| format!("{} {}", if t.met { "✓" } else { "✗" }, t.label))
            .collect::<Vec<_>>()
            .join(", ");
        vec![
            self.workload.to_owned(),
            self.variant.name(),
            self.op.name().to_owned(),
            time(self.ours),
            time(self.peer),
            self.ratio().map_or("—".into(), |r| format!("{r:.2}×")),
            time(self.ours_cpu),
            time(self.peer_cpu),
            self.cpu_ratio().map_or("—".into(), |r| format!("{r:.2}×")),
            per_second(self.totals.bytes, 1e6),
            per_second(self.totals.messages, 1.0),
            self.limit_cell(),
            memory(self.memory[0]),
            memory(self.memory[1]),
            targets,
        ]
    }
}

#[allow(clippy::too_many_arguments)]
fn render(
    args: &BenchArgs,
    workloads: &[Workload],
    expected: &[(Totals, Totals)],
    data: &[DataFile],
    memcpy: &Limit,
    rows: &[Row],
    load_before: &str,
    started: Instant,
) -> String {
    let mut s = String::new();
    let command = std::iter::once("cargo xtask bench".to_owned())
        .chain(std::env::args().skip(2))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(s, "## `{command}`\n");
    for line in machine::describe() {
        let _ = writeln!(s, "- {line}");
    }
    let _ = writeln!(
        s,
        "- load average (1/5/15 min): {load_before} at the start, {} at the end; {:.0} s in all",
        machine::load_average(),
        started.elapsed().as_secs_f64()
    );
    let _ = writeln!(
        s,
        "- memcpy: {:.1} GB/s (256 MiB buffers, one thread)",
        memcpy.bytes_per_second() / 1e9
    );
    if args.quick {
        let _ = writeln!(
            s,
            "- **--quick: the workloads are scaled down** (W1 100,000 messages, W2 100 images, W3 2 s of the robot log) and each operation gets fewer rounds: the full run is `cargo xtask bench`"
        );
    }
    for (w, (all, query)) in workloads.iter().zip(expected) {
        let sizes: Vec<String> = data
            .iter()
            .filter(|f| workloads[f.workload].name == w.name)
            .map(|f| format!("{} {} MB", f.variant.name(), megabytes(f.file_bytes)))
            .collect();
        let _ = writeln!(
            s,
            "- {}: {} — {} messages, {} MB of payload; query {} over {:.1}% of the time = {} messages, {} MB; files: {}",
            w.name,
            w.title,
            all.messages,
            megabytes(all.bytes),
            w.query.topic,
            w.query.length * 100.0,
            query.messages,
            megabytes(query.bytes),
            sizes.join(", ")
        );
    }
    let rounds = args.rounds.unwrap_or(3);
    let _ = writeln!(
        s,
        "\nTimes are medians of robolog's and the peer's runs, each in its own child process, over up to {rounds} alternating rounds (fewer for operations whose rounds take over {} s; a child repeats a short operation and drops its first, warm-up repetition). Ratio = peer time / robolog time (> 1: robolog is faster); the targets are judged on it. CPU = CPU time of the whole child process (every thread, `CLOCK_PROCESS_CPUTIME_ID`) for the same repetitions, and its ratio: on a loaded machine wall time includes waiting for a core, CPU time does not (but counts work done on extra threads). MB/s and msg/s are robolog's, over message payload bytes. \"vs limit\" = the limit's time for the same work / robolog's time: memcpy of the uncompressed chunk bytes for uncompressed files, otherwise the C library (liblz4, libzstd, libbz2) decoding the file's chunks on one thread, which is what the targets use; then, for LZ4, the pure-Rust lz4_flex block decoder (robolog-framing without its `lz4-c` feature) and, for bzip2, the `bzip2` 0.6 crate robolog-framing calls (built here with `bz2-c`, so on the same C libbz2); the parallel ceiling after the table is the same C library on every core at once. Peak RSS in MB above the process's start (`VmHWM`, includes touched pages of the memory-mapped input), the anonymous part (heap, decode buffers) in parentheses. \"mem\" target: robolog's anonymous peak ≤ {MEMORY_CHUNKS}× the file's largest chunk. Peers: `mcap` 0.26 (MessageStream; indexed reader + Summary), `rosbag` 0.6 (chunk records over mmap; log-time order = collect and sort; cannot write: —); convert peer = `rosbag` read + `mcap` write.\n",
        if args.quick { 3 } else { 20 }
    );
    let header = [
        "workload",
        "file",
        "operation",
        "robolog",
        "peer",
        "ratio",
        "robolog CPU",
        "peer CPU",
        "CPU ratio",
        "MB/s",
        "msg/s",
        "vs limit",
        "peak RSS robolog",
        "peak RSS peer",
        "targets",
    ];
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(
        s,
        "|{}",
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if (3..12).contains(&i) {
                "---:|"
            } else {
                "---|"
            })
            .collect::<String>()
    );
    for row in rows {
        let _ = writeln!(s, "| {} |", row.cells().join(" | "));
    }
    let _ = writeln!(s);
    summary(&mut s, rows, data);
    s
}

/// For each compressed file: the reference decoder on one thread and on every core, against the
/// fastest full read of each side (decoded chunk bytes per second). A reader that decodes on
/// every core can beat one that decodes on one by at most the decoder's own speedup, when both
/// decode at the same speed per core: this says whether a missed ratio is ours or the machine's.
fn parallel_ceiling(s: &mut String, rows: &[Row]) {
    let mut files: Vec<(&str, Variant)> = Vec::new();
    for row in rows.iter().filter(|r| r.raw.parallel.is_some()) {
        if !files.contains(&(row.workload, row.variant)) {
            files.push((row.workload, row.variant));
        }
    }
    if files.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nParallel ceiling (the C library decoding every chunk on one thread and on every core; the fastest full read of each side, in decoded chunk bytes per second):"
    );
    for (workload, variant) in files {
        let reads: Vec<&Row> = rows
            .iter()
            .filter(|r| r.workload == workload && r.variant == variant && r.is_read())
            .collect();
        let Some(first) = reads.first() else {
            continue;
        };
        let (Some(parallel), Some(speedup)) = (first.raw.parallel, first.raw.parallel_speedup())
        else {
            continue;
        };
        let bytes = first.raw.bytes as f64;
        let fastest = |side: fn(&Row) -> Option<f64>| {
            reads
                .iter()
                .filter_map(|r| side(r))
                .min_by(f64::total_cmp)
                .map(|seconds| bytes / seconds)
        };
        let (reference, _) = codec_library(variant.codec());
        let mut line = format!(
            "- {workload} {}: {reference} {:.0} MB/s on one thread, {:.0} MB/s on {} ({speedup:.2}×)",
            variant.name(),
            first.raw.bytes_per_second() / 1e6,
            bytes / parallel.seconds / 1e6,
            parallel.threads,
        );
        if let (Some(ours), Some(peer)) = (fastest(|r| r.ours), fastest(|r| r.peer)) {
            let _ = write!(
                line,
                "; robolog {:.0} MB/s ({:.0}% of the {}-thread figure), the peer {:.0} MB/s: {:.2}×; a reader that only decoded, at the {}-thread figure, would be {:.2}× the peer",
                ours / 1e6,
                ours * parallel.seconds / bytes * 100.0,
                parallel.threads,
                peer / 1e6,
                ours / peer,
                parallel.threads,
                bytes / parallel.seconds / peer,
            );
        }
        let _ = writeln!(s, "{line}");
    }
}

/// Targets met and missed, and info time against data size.
fn summary(s: &mut String, rows: &[Row], data: &[DataFile]) {
    let mut met = BTreeMap::<String, (usize, usize)>::new();
    for row in rows {
        for target in row.targets() {
            let entry = met.entry(target.label).or_default();
            if target.met {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }
    let _ = writeln!(s, "Targets (rows met / missed):");
    for (target, (ok, missed)) in &met {
        let _ = writeln!(s, "- {target}: {ok} met, {missed} missed");
    }
    let info: Vec<&Row> = rows.iter().filter(|r| r.op == Op::Info).collect();
    let size = |r: &Row| {
        data.iter()
            .find(|f| f.variant == r.variant && r.workload == f.workload_name)
            .map_or(0, |f| f.file_bytes)
    };
    if !info.is_empty() {
        let _ = writeln!(
            s,
            "\ninfo/summary time against file size (an indexed file's info should not grow with its data):"
        );
        for r in info {
            let _ = writeln!(
                s,
                "- {} {}: {} MB, {} chunks → robolog {}, peer {}",
                r.workload,
                r.variant.name(),
                megabytes(size(r)),
                r.raw.chunks,
                time(r.ours),
                time(r.peer)
            );
        }
    }
    parallel_ceiling(s, rows);
    core_probe(s, rows);
    let _ = writeln!(
        s,
        "\nrobolog samples per row: {}",
        rows.iter()
            .map(|r| r.samples.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
}

/// The fewest effective cores seen while each row was measured, and the rows that missed their
/// ratio target with that figure: a miss measured while the cores were slow together says more
/// about the machine than about the reader.
fn core_probe(s: &mut String, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    let cores = robolog_framing::default_threads();
    let _ = writeln!(
        s,
        "\nEffective cores, the fewest of the probes before each round of a row and after its last (LZ4 decoding on every core at once against one thread; {cores} when every core is free): {}",
        rows.iter()
            .map(|r| format!("{:.2}", r.cores))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let missed: Vec<String> = rows
        .iter()
        .filter(|r| {
            r.targets()
                .iter()
                .any(|t| t.kind == TargetKind::PeerRatio && !t.met)
        })
        .filter_map(|r| {
            Some(format!(
                "{} {} {} {:.2}× ({:.2} cores)",
                r.workload,
                r.variant.name(),
                r.op.name(),
                r.ratio()?,
                r.cores
            ))
        })
        .collect();
    if !missed.is_empty() {
        let _ = writeln!(
            s,
            "Rows that missed their ratio target, with their effective cores: {}",
            missed.join("; ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use limits::ParallelLimit;

    fn row(variant: Variant, op: Op, ours: f64, peer: f64, parallel: Option<f64>) -> Row {
        let raw = Limit {
            bytes: 100_000_000,
            seconds: 2.0,
            library_seconds: None,
            parallel: parallel.map(|seconds| ParallelLimit {
                threads: 2,
                seconds,
            }),
            chunks: 10,
            largest_chunk: 10_000_000,
        };
        Row {
            workload: "W1",
            variant,
            op,
            ours: Some(ours),
            peer: Some(peer),
            ours_cpu: None,
            peer_cpu: None,
            samples: 1,
            totals: Totals::default(),
            raw,
            memcpy: raw,
            memory: [None, None],
            cores: 2.0,
        }
    }

    #[test]
    fn the_parallel_ceiling_compares_the_fastest_reads_with_both_limits() {
        let bz2 = Variant::Bag(robolog_rosbag::ChunkCompression::Bz2);
        let none = Variant::Mcap(robolog_framing::Compression::None);
        let rows = [
            row(bz2, Op::ReadFile, 1.25, 2.2, Some(1.0)),
            row(bz2, Op::ReadTime, 1.1, 2.0, Some(1.0)),
            // Not a full read: a query's time says nothing about decoding every chunk.
            row(bz2, Op::Query, 0.01, 0.5, Some(1.0)),
            // No parallel figure (an uncompressed file): no line.
            row(none, Op::ReadFile, 0.1, 0.2, None),
        ];
        let mut s = String::new();
        parallel_ceiling(&mut s, &rows);
        let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(
            lines,
            [
                "- W1 bag-bz2: libbz2 50 MB/s on one thread, 100 MB/s on 2 (2.00×); robolog 91 MB/s (91% of the 2-thread figure), the peer 50 MB/s: 1.82×; a reader that only decoded, at the 2-thread figure, would be 2.00× the peer"
            ]
        );
    }

    #[test]
    fn missed_ratios_are_listed_with_the_cores_they_were_measured_with() {
        let zstd = Variant::Mcap(robolog_framing::Compression::Zstd);
        let mut slow = row(zstd, Op::ReadTime, 1.0, 1.2, None);
        slow.cores = 1.234;
        let rows = [
            slow,
            // Met (1.6× against 1.5×): not listed.
            row(zstd, Op::ReadFile, 1.0, 1.6, None),
            // Info has no ratio target.
            row(zstd, Op::Info, 1.0, 0.5, None),
        ];
        let mut s = String::new();
        core_probe(&mut s, &rows);
        let lines: Vec<&str> = s.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 2, "{s}");
        assert!(lines[0].ends_with("): 1.23 2.00 2.00"), "{}", lines[0]);
        assert_eq!(
            lines[1],
            "Rows that missed their ratio target, with their effective cores: W1 mcap-zstd read, log-time order 1.20× (1.23 cores)"
        );
    }

    #[test]
    fn slow_operations_get_fewer_rounds_but_every_operation_gets_one() {
        // An operation whose first round took 30 s of a 20 s budget stops there.
        assert!(takes_round(0, 30.0, 20.0));
        assert!(!takes_round(1, 30.0, 20.0));
        // Up to half the budget in round 0 buys a second round, two thirds a third.
        assert!(takes_round(1, 10.0, 20.0));
        assert!(!takes_round(1, 10.5, 20.0));
        assert!(takes_round(2, 13.0, 20.0));
        assert!(!takes_round(2, 13.5, 20.0));
    }

    #[test]
    fn the_probe_counts_at_most_the_cores_there_are() {
        let cores = robolog_framing::default_threads() as f64;
        let found = machine::effective_cores();
        assert!(found > 0.0 && found <= cores, "{found} of {cores}");
    }

    #[test]
    fn no_parallel_figures_no_ceiling_section() {
        let none = Variant::Mcap(robolog_framing::Compression::None);
        let mut s = String::new();
        parallel_ceiling(&mut s, &[row(none, Op::ReadFile, 0.1, 0.2, None)]);
        assert_eq!(s, "");
    }
}
