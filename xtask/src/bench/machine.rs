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
