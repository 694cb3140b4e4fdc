//! Servers that misbehave (500s, dropped connections, bodies cut short, ranges ignored): a read
//! is retried until it gets the right bytes, or fails with an error that says what happened;
//! it never hands out wrong bytes.

use robolog_remote::{Remote, RemoteError, RemoteOptions};
use robolog_testkit::faulty::{Fault, serve};

fn object(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn transient_faults_are_retried_and_the_bytes_are_right() {
    let data = object(1 << 20);
    for fault in [Fault::Error500, Fault::Drop, Fault::Truncate] {
        // Every other request fails.
        let server = serve(data.clone(), "log.mcap", move |n| {
            if n % 2 == 0 { fault } else { Fault::None }
        });
        let remote = Remote::open(server.url(), &RemoteOptions::new())
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
        let log = server.log();
        assert!(log.iter().any(|(f, _)| *f == fault), "{fault:?}: {log:?}");
        assert!(server.requests() >= 4);
    }
}

#[test]
fn a_server_that_keeps_failing_gives_an_error_that_says_so() {
    let data = object(1 << 20);
    for fault in [Fault::Error500, Fault::Truncate] {
        // The open succeeds, every later request fails.
        let server = serve(data.clone(), "log.mcap", move |n| {
            if n == 0 { Fault::None } else { fault }
        });
        let remote = Remote::open(server.url(), &RemoteOptions::new()).unwrap();
        let err = remote.input().read(0..100).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(server.url()), "{text}");
        assert!(text.contains("bytes 0..100"), "{text}");
        if fault == Fault::Truncate {
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{text}");
        } else {
            assert!(text.contains("500"), "{text}");
        }
        // Retried, and then given up.
        let requests = server.requests();
        assert!((3..=40).contains(&requests), "{requests}");
    }
}

#[test]
fn a_server_that_ignores_ranges_is_refused_or_downloaded_when_allowed() {
    let data = object(300_000);
    let server = serve(data.clone(), "log.mcap", |_| Fault::IgnoreRange);
    let err = Remote::open(server.url(), &RemoteOptions::new()).unwrap_err();
    assert!(matches!(err, RemoteError::RangesIgnored { .. }), "{err}");
    assert!(err.to_string().contains("--allow-download"), "{err}");
    assert_eq!(server.requests(), 1);

    let remote = Remote::open(server.url(), &RemoteOptions::new().allow_download(true)).unwrap();
    assert!(remote.downloaded());
    assert_eq!(&remote.input().read_all().unwrap()[..], &data[..]);
    assert_eq!(remote.fetched().requests, 2);
}
