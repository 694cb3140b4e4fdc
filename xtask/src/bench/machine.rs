//! What the numbers were measured on: CPU, cores, memory, kernel, compiler, load.

use std::fs;
use std::process::Command;

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
    let model = command("lscpu", &[])
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Model name:").map(|m| m.trim().to_owned()))
        })
        .unwrap_or_else(|| "unknown".into());
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
