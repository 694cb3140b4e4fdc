//! Whole processes timed from outside, for the rows that compare command-line tools: wall time,
//! CPU time of every thread, peak resident memory; the commands alternate round after round.

use std::fs;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One run of a command: wall and CPU seconds, peak resident memory.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run {
    pub(super) wall: f64,
    pub(super) cpu: f64,
    pub(super) peak_mb: f64,
}

/// The CPU seconds of this process's reaped children (`cutime` + `cstime` of
/// `/proc/self/stat`, in the kernel's fixed 100 ticks per second).
fn children_cpu_seconds() -> Result<f64, String> {
    let stat = fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the file, 14 and 15 after the name.
    let ticks = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .ok_or_else(|| "no cutime/cstime in /proc/self/stat".to_owned())
    };
    Ok((ticks(13)? + ticks(14)?) / 100.0)
}

/// `VmHWM` of a running process in MB (0 once it has exited).
fn peak_mb(pid: u32) -> f64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Runs `command` with stdout to /dev/null. The peak memory is sampled every millisecond while
/// it runs (`VmHWM` only grows, so only growth in its last millisecond is missed).
pub(super) fn run_once(command: &[String]) -> Result<Run, String> {
    let cpu_before = children_cpu_seconds()?;
    let start = Instant::now();
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", command[0]))?;
    let mut peak = 0.0f64;
    let status = loop {
        peak = peak.max(peak_mb(child.id()));
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds()? - cpu_before;
    if !status.success() {
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            std::io::Read::read_to_string(&mut pipe, &mut stderr).map_err(|e| e.to_string())?;
        }
        return Err(format!("{} failed ({status}): {stderr}", command.join(" ")));
    }
    Ok(Run {
        wall,
        cpu,
        peak_mb: peak,
    })
}

/// The median run (by wall time) of each command, run alternately `rounds` times after one
/// warm-up run each (the page cache and the binaries); `None` for a command that failed.
pub(super) fn time_commands(commands: &[Vec<String>], rounds: usize) -> Vec<Option<Run>> {
    time_commands_with(commands, rounds, &mut |_| Ok(()))
}

/// [`time_commands`], calling `before(i)` ahead of each run of command `i` (to remove the
/// output of its last run, say); its time is not counted.
pub(super) fn time_commands_with(
    commands: &[Vec<String>],
    rounds: usize,
    before: &mut dyn FnMut(usize) -> Result<(), String>,
) -> Vec<Option<Run>> {
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); commands.len()];
    let mut failed = vec![false; commands.len()];
    for round in 0..=rounds {
        for (i, command) in commands.iter().enumerate() {
            if failed[i] {
                continue;
            }
            match before(i).and_then(|()| run_once(command)) {
                Ok(run) if round > 0 => runs[i].push(run),
                Ok(_) => {}
                Err(e) => {
                    eprintln!("bench: {e}");
                    failed[i] = true;
                }
            }
        }
    }
    runs.into_iter()
        .zip(failed)
        .map(|(mut r, failed)| {
            if failed || r.is_empty() {
                return None;
            }
            r.sort_by(|a, b| a.wall.total_cmp(&b.wall));
            Some(r[r.len() / 2])
        })
        .collect()
}
