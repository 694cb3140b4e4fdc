//! Reading a test server's request log once the server has finished writing it.
//!
//! A server logs a request after it has sent the response, so the client (and the test behind
//! it) can be done before the last lines are written: a count read at once may miss them.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long the log must stay the same to count as written.
const QUIET: Duration = Duration::from_millis(150);

/// The longest wait for a log that keeps changing (a server still busy is answered with what
/// it wrote by then).
const AT_MOST: Duration = Duration::from_secs(5);

/// The log at `path` (empty when missing) once it has not changed for [`QUIET`], after
/// [`AT_MOST`] at the latest.
pub(crate) fn settled(path: &Path) -> String {
    let read = || std::fs::read_to_string(path).unwrap_or_default();
    let deadline = Instant::now() + AT_MOST;
    let mut log = read();
    let mut since = Instant::now();
    while Instant::now() < deadline {
        std::thread::sleep(QUIET / 5);
        let now = read();
        if now != log {
            log = now;
            since = Instant::now();
        } else if since.elapsed() >= QUIET {
            break;
        }
    }
    log
}

/// `(method, target, status)` of a line in the common log format,
/// `127.0.0.1 - - [date] "GET /bucket/key HTTP/1.1" 206 1234`.
pub(crate) fn common_log_line(line: &str) -> Option<(String, String, u16)> {
    let (_, request) = line.split_once('"')?;
    let (request, rest) = request.rsplit_once('"')?;
    let mut words = request.split(' ');
    let method = words.next()?.to_owned();
    let target = words.next()?.to_owned();
    let status = rest.split_whitespace().next()?.parse().ok()?;
    Some((method, target, status))
}
