//! Servers that misbehave (500s, dropped connections, bodies cut short, ranges ignored): a read
//! is retried until it gets the right bytes, or fails with an error that says what happened;
//! it never hands out wrong bytes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use robolog_remote::{Remote, RemoteError, RemoteOptions};

/// What the server does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
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

/// A one-object HTTP/1.1 server on the loopback whose n-th request gets `plan(n)`.
struct Server {
    url: String,
    requests: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<(Fault, String)>>>,
}

fn serve(data: Vec<u8>, plan: impl Fn(usize) -> Fault + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/log.mcap", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (count, record) = (Arc::clone(&requests), Arc::clone(&log));
    let data = Arc::new(data);
    let plan = Arc::new(plan);
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

/// Serves the requests of one connection (keep-alive) until it closes or a fault closes it.
fn connection(
    mut stream: TcpStream,
    data: &[u8],
    plan: &(dyn Fn(usize) -> Fault + Send + Sync),
    count: &AtomicUsize,
    log: &Mutex<Vec<(Fault, String)>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
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
            .unwrap()
            .push((fault, range.clone().unwrap_or_default()));
        let len = data.len() as u64;
        let (start, end) = match range.as_deref().and_then(|r| r.strip_prefix("bytes=")) {
            Some(r) => match r.split_once('-').unwrap() {
                ("", suffix) => (len.saturating_sub(suffix.parse().unwrap()), len),
                (a, "") => (a.parse().unwrap(), len),
                (a, b) => (a.parse().unwrap(), (b.parse::<u64>().unwrap() + 1).min(len)),
            },
            None => (0, len),
        };
        let body = &data[start as usize..end as usize];
        let head = |status: &str, extra: String, body_len: usize| {
            format!(
                "HTTP/1.1 {status}\r\nContent-Length: {body_len}\r\n{extra}Content-Type: application/octet-stream\r\n\r\n"
            )
        };
        let partial = format!("Content-Range: bytes {start}-{}/{len}\r\n", end - 1);
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

fn object(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn transient_faults_are_retried_and_the_bytes_are_right() {
    let data = object(1 << 20);
    for fault in [Fault::Error500, Fault::Drop, Fault::Truncate] {
        // Every other request fails.
        let server = serve(
            data.clone(),
            move |n| if n % 2 == 0 { fault } else { Fault::None },
        );
        let remote = Remote::open(&server.url, &RemoteOptions::new())
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_eq!(remote.len(), data.len() as u64);
        let input = remote.input();
        for range in [0..100u64, 300_000..700_000, 1000..1001] {
            let got = input
                .read(range.clone())
                .unwrap_or_else(|e| panic!("{fault:?} {range:?}: {e}"));
            assert_eq!(
                &got[..],
                &data[range.start as usize..range.end as usize],
                "{fault:?}"
            );
        }
        let log = server.log.lock().unwrap().clone();
        assert!(log.iter().any(|(f, _)| *f == fault), "{fault:?}: {log:?}");
        assert!(server.requests.load(Ordering::SeqCst) >= 4);
    }
}

#[test]
fn a_server_that_keeps_failing_gives_an_error_that_says_so() {
    let data = object(1 << 20);
    for fault in [Fault::Error500, Fault::Truncate] {
        // The open succeeds, every later request fails.
        let server = serve(
            data.clone(),
            move |n| if n == 0 { Fault::None } else { fault },
        );
        let remote = Remote::open(&server.url, &RemoteOptions::new()).unwrap();
        let err = remote.input().read(0..100).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&server.url), "{text}");
        assert!(text.contains("bytes 0..100"), "{text}");
        if fault == Fault::Truncate {
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{text}");
        } else {
            assert!(text.contains("500"), "{text}");
        }
        // Retried, and then given up.
        let requests = server.requests.load(Ordering::SeqCst);
        assert!((3..=40).contains(&requests), "{requests}");
    }
}

#[test]
fn a_server_that_ignores_ranges_is_refused_or_downloaded_when_allowed() {
    let data = object(300_000);
    let server = serve(data.clone(), |_| Fault::IgnoreRange);
    let err = Remote::open(&server.url, &RemoteOptions::new()).unwrap_err();
    assert!(matches!(err, RemoteError::RangesIgnored { .. }), "{err}");
    assert!(err.to_string().contains("--allow-download"), "{err}");
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);

    let remote = Remote::open(&server.url, &RemoteOptions::new().allow_download(true)).unwrap();
    assert!(remote.downloaded());
    assert_eq!(&remote.input().read_all().unwrap()[..], &data[..]);
    assert_eq!(remote.fetched().requests, 2);
}
