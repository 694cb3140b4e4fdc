//! A one-object HTTP/1.1 server on the loopback that misbehaves on purpose: its n-th request
//! gets the [`Fault`] a plan gives it (a 500, a dropped connection, a body cut short, a range
//! ignored), so that tests see how remote reads cope.
//!
//! ```
//! use robolog_testkit::faulty::{Fault, serve};
//!
//! // Every other request answers 500.
//! let server = serve(vec![7; 1000], "log.mcap", |n| {
//!     if n % 2 == 0 { Fault::Error500 } else { Fault::None }
//! });
//! assert!(server.url().ends_with("/log.mcap"));
//! assert_eq!(server.requests(), 0);
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What the server does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers properly.
    None,
    /// Answers 500.
    Error500,
    /// Closes the connection without answering.
    Drop,
    /// Sends the headers of the whole range and half of its body, then closes.
    Truncate,
    /// Answers 200 with the whole object, as a server without range support does.
    IgnoreRange,
}

type Plan = dyn Fn(usize) -> Fault + Send + Sync;

/// The running server (its threads end with the test process).
#[derive(Debug)]
pub struct Server {
    url: String,
    requests: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<(Fault, String)>>>,
}

impl Server {
    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Each request's fault and `Range` header (empty without one), in order.
    pub fn log(&self) -> Vec<(Fault, String)> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Serves `data` as `/name`; request n (from 0) gets `plan(n)`.
pub fn serve(
    data: Vec<u8>,
    name: &str,
    plan: impl Fn(usize) -> Fault + Send + Sync + 'static,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    let address = listener.local_addr().expect("the listener's address");
    let url = format!("http://{address}/{name}");
    let requests = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (count, record) = (Arc::clone(&requests), Arc::clone(&log));
    let data = Arc::new(data);
    let plan: Arc<Plan> = Arc::new(plan);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (data, plan, count, record) = (
                Arc::clone(&data),
                Arc::clone(&plan),
                Arc::clone(&count),
                Arc::clone(&record),
            );
            std::thread::spawn(move || connection(stream, &data, &*plan, &count, &record));
        }
    });
    Server { url, requests, log }
}

/// The byte range a `Range` header asks of an object of `len` bytes (the whole object without
/// one, or when it does not parse).
fn range_of(header: Option<&str>, len: u64) -> (u64, u64) {
    let parsed = header
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .and_then(|pair| match pair {
            ("", suffix) => Some((len.saturating_sub(suffix.parse().ok()?), len)),
            (a, "") => Some((a.parse().ok()?, len)),
            (a, b) => Some((a.parse().ok()?, (b.parse::<u64>().ok()? + 1).min(len))),
        });
    match parsed {
        Some((start, end)) if start < end => (start, end),
        _ => (0, len),
    }
}

/// Serves the requests of one connection (keep-alive) until it closes or a fault closes it.
fn connection(
    mut stream: TcpStream,
    data: &[u8],
    plan: &Plan,
    count: &AtomicUsize,
    log: &Mutex<Vec<(Fault, String)>>,
) {
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut range = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("range")
            {
                range = Some(value.trim().to_owned());
            }
        }
        let n = count.fetch_add(1, Ordering::SeqCst);
        let fault = plan(n);
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((fault, range.clone().unwrap_or_default()));
        let len = data.len() as u64;
        let (start, end) = range_of(range.as_deref(), len);
        let body = &data[start as usize..end as usize];
        let head = |status: &str, extra: String, body_len: usize| {
            format!(
                "HTTP/1.1 {status}\r\nContent-Length: {body_len}\r\n{extra}Content-Type: application/octet-stream\r\n\r\n"
            )
        };
        let partial = format!(
            "Content-Range: bytes {start}-{}/{len}\r\n",
            end.saturating_sub(1)
        );
        let sent = match fault {
            Fault::None if range.is_some() => stream
                .write_all(head("206 Partial Content", partial, body.len()).as_bytes())
                .and_then(|()| stream.write_all(body)),
            Fault::None | Fault::IgnoreRange => stream
                .write_all(head("200 OK", String::new(), data.len()).as_bytes())
                .and_then(|()| stream.write_all(data)),
            Fault::Error500 => {
                stream.write_all(head("500 Internal Server Error", String::new(), 0).as_bytes())
            }
            Fault::Drop => return,
            Fault::Truncate => {
                let _ = stream
                    .write_all(head("206 Partial Content", partial, body.len()).as_bytes())
                    .and_then(|()| stream.write_all(&body[..body.len() / 2]));
                return;
            }
        };
        if sent.is_err() {
            return;
        }
    }
}
