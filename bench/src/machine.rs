//! What the numbers were measured on: CPU, cores, memory, kernel, compiler, load, and how many
//! cores' worth of work the machine gives at a time.

use std::fs;
use std::process::Command;
use std::sync::Barrier;
use std::time::Instant;

fn command(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The 1, 5 and 15 minute load averages.
pub(crate) fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One line per fact, as markdown list items.
pub(crate) fn describe() -> Vec<String> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_owned())
        })
    };
    let model = format!(
        "{} at {} MHz, {} KB cache (/proc/cpuinfo)",
        field("model name").unwrap_or_else(|| "unknown".into()),
        field("cpu MHz").unwrap_or_else(|| "?".into()),
        field("cache size")
            .map(|c| c.trim_end_matches("KB").trim().to_owned())
            .unwrap_or_else(|| "?".into())
    );
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let ram = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let kb: u64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(format!("{:.1} GiB", kb as f64 / (1 << 20) as f64))
            })
        })
        .unwrap_or_else(|| "unknown".into());
    let kernel = command("uname", &["-sr"]).unwrap_or_else(|| "unknown".into());
    let rustc = command("rustc", &["-V"]).unwrap_or_else(|| "unknown".into());
    let date = command("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(|| "unknown".into());
    vec![
        format!("date: {date}"),
        format!("CPU: {model}, {cores} cores available"),
        format!("RAM: {ram}"),
        format!("kernel: {kernel}"),
        format!("compiler: {rustc} (release profile)"),
    ]
}

/// The size of the block the core probe decodes.
const PROBE_BYTES: usize = 256 << 10;

/// The block the core probe decodes: `PROBE_BYTES` of the test kit's text-like bytes,
/// LZ4-compressed once per process.
fn probe_block() -> &'static [u8] {
    static BLOCK: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BLOCK.get_or_init(|| {
        lz4_flex::block::compress(&robolog_testkit::sample_bytes::compressible(PROBE_BYTES))
    })
}

/// Decodes the probe block 40 times (10 MiB of output, a few milliseconds) and returns the time.
fn probe_decode(out: &mut [u8]) -> f64 {
    let compressed = probe_block();
    let started = Instant::now();
    for _ in 0..40 {
        let written = lz4_flex::block::decompress_into(compressed, out).unwrap_or(0);
        std::hint::black_box(written);
    }
    started.elapsed().as_secs_f64()
}

/// How many cores' worth of work the machine gives right now: the same LZ4 decoding timed on one
/// thread and on one thread per core at once (the fastest of three tries each), as
/// `cores × one-thread time / every-core time`. Close to the core count when every core is free.
///
/// A virtual machine's cores can be slower together than alone (the host runs them on one
/// physical core's two hardware threads, or lends the cores to another guest for a while): then
/// a reader that decodes on every core gains less over a one-thread peer, and this says so for
/// the rows measured around it.
pub(crate) fn effective_cores() -> f64 {
    let cores = robolog_framing::default_threads();
    let mut out = vec![0u8; PROBE_BYTES];
    let alone = (0..3)
        .map(|_| probe_decode(&mut out))
        .fold(f64::INFINITY, f64::min);
    let together = (0..3)
        .map(|_| {
            let start = Barrier::new(cores);
            std::thread::scope(|scope| {
                let threads: Vec<_> = (0..cores)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut out = vec![0u8; PROBE_BYTES];
                            start.wait();
                            probe_decode(&mut out)
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .filter_map(|t| t.join().ok())
                    .fold(0.0, f64::max)
            })
        })
        .fold(f64::INFINITY, f64::min);
    if together > 0.0 && together.is_finite() {
        (cores as f64 * alone / together).min(cores as f64)
    } else {
        0.0
    }
}
