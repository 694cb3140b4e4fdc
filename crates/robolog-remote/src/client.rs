//! One object behind a URL: ranged GETs through `object_store`, run on a small runtime of our
//! own, retried with backoff, counted.

use std::future::Future;
use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use object_store::path::Path;
use object_store::{BackoffConfig, ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig};
use robolog_framing::Bytes;
use url::Url;

use crate::RemoteError;

/// Attempts of one ranged GET whose body came back short or broken (object_store retries, with
/// backoff, the requests that fail before their body starts: 5xx answers, refused or dropped
/// connections).
const BODY_ATTEMPTS: u32 = 4;

/// The wait before the second attempt; it doubles for each later one.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Requests and bytes fetched from an object so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fetched {
    /// GET requests sent (each retry counts).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// What every object of the process has fetched (for progress reports).
static TOTAL: Counters = Counters {
    requests: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
};

impl Counters {
    pub(crate) fn get(&self) -> Fetched {
        Fetched {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    fn request(&self) {
        for c in [self, &TOTAL] {
            c.requests.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn received(&self, n: usize) {
        for c in [self, &TOTAL] {
            c.bytes.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// Requests sent and bytes received by every remote object of this process so far: a progress
/// report of long remote work polls it.
pub fn fetched_total() -> Fetched {
    TOTAL.get()
}

/// The runtime the requests run on, shut down without waiting when the last reader is gone
/// (so that dropping a reader never blocks, inside another runtime included).
#[derive(Debug)]
pub(crate) struct Runtime(Option<tokio::runtime::Runtime>);

impl Runtime {
    fn new() -> io::Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("robolog-remote")
            .enable_all()
            .build()?;
        Ok(Self(Some(rt)))
    }

    pub(crate) fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.0.as_ref().map(tokio::runtime::Runtime::handle)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// What a GET failed with.
#[derive(Debug)]
pub(crate) enum GetError {
    /// The server answered a ranged GET with the whole object.
    RangesIgnored,
    /// The request failed (after object_store's own retries).
    Store(object_store::Error),
    /// The body broke off after the answer's headers.
    Body(object_store::Error),
    /// The body was shorter or longer than the range (after all attempts).
    Length { expected: u64, got: u64 },
}

impl GetError {
    fn retried(&self) -> bool {
        match self {
            // Retried by object_store already, or not worth retrying.
            Self::RangesIgnored | Self::Store(_) => false,
            Self::Length { .. } | Self::Body(_) => true,
        }
    }
}

/// A client of one object.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    store: Arc<dyn ObjectStore>,
    path: Path,
    pub(crate) url: Arc<str>,
    pub(crate) counters: Arc<Counters>,
    /// Whether the store answers a suffix range (`bytes=-N`); Azure Blob Storage does not.
    pub(crate) suffix_ranges: bool,
}

/// The store and the path within it of `url`, and the runtime to reach it on.
pub(crate) fn connect(url: &str) -> Result<(Client, Arc<Runtime>), RemoteError> {
    let bad = |reason: String| RemoteError::Url {
        url: url.to_owned(),
        reason,
    };
    let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: FIRST_BACKOFF,
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
    };
    let path = Path::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
    let store_error = |source| RemoteError::Store {
        url: url.to_owned(),
        source,
    };
    let store: Arc<dyn ObjectStore> = match parsed.scheme() {
        "http" | "https" => {
            let origin = parsed.origin().ascii_serialization();
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(origin)
                    .with_client_options(ClientOptions::new().with_allow_http(true))
                    .with_retry(retry)
                    .build()
                    .map_err(store_error)?,
            )
        }
        "s3" | "s3a" => Arc::new(
            crate::aws_files::apply(object_store::aws::AmazonS3Builder::from_env())
                .with_url(url)
                .with_retry(retry)
                .build()
                .map_err(store_error)?,
        ),
        "gs" => Arc::new(
            object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_retry(retry)
                .build()
                .map_err(store_error)?,
        ),
        "az" | "abfs" | "abfss" => Arc::new(
            object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_retry(retry)
                .build()
                .map_err(store_error)?,
        ),
        other => {
            return Err(bad(format!(
                "the scheme {other}:// is not supported (http, https, s3, gs and az are)"
            )));
        }
    };
    let runtime = Runtime::new().map_err(|source| RemoteError::Io {
        url: url.to_owned(),
        source,
    })?;
    Ok((
        Client {
            store,
            path,
            url: url.into(),
            counters: Arc::default(),
            suffix_ranges: !matches!(parsed.scheme(), "az" | "abfs" | "abfss"),
        },
        Arc::new(runtime),
    ))
}

impl Client {
    /// `range` of the object: its bytes, where they are, and the object's length.
    pub(crate) async fn get(&self, range: GetRange) -> Result<(Bytes, Range<u64>, u64), GetError> {
        let mut wait = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            match self.get_once(range.clone()).await {
                Err(e) if e.retried() && attempt < BODY_ATTEMPTS => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    async fn get_once(&self, range: GetRange) -> Result<(Bytes, Range<u64>, u64), GetError> {
        use futures::StreamExt;
        self.counters.request();
        let options = GetOptions::default().with_range(Some(range));
        let result = self
            .store
            .get_opts(&self.path, options)
            .await
            .map_err(|e| {
                // The HTTP store says "not supported", the cloud stores "non-partial response".
                if matches!(e, object_store::Error::NotSupported { .. })
                    || e.to_string().contains("non-partial response")
                {
                    GetError::RangesIgnored
                } else {
                    GetError::Store(e)
                }
            })?;
        let (got_range, size) = (result.range.clone(), result.meta.size);
        let expected = got_range.end - got_range.start;
        // The pieces are counted as they come, for progress reports; the buffer is sized by
        // the range asked for (object_store checked that the answer's range is that one).
        let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        let mut stream = result.into_stream();
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(GetError::Body)?;
            self.counters.received(piece.len());
            if (body.len() + piece.len()) as u64 > expected {
                // Longer than the range: never handed out.
                return Err(GetError::Length {
                    expected,
                    got: (body.len() + piece.len()) as u64,
                });
            }
            body.extend_from_slice(&piece);
        }
        if body.len() as u64 != expected {
            return Err(GetError::Length {
                expected,
                got: body.len() as u64,
            });
        }
        Ok((Bytes::from(body), got_range, size))
    }

    /// The whole object, as a stream of pieces written to `out` (a download).
    pub(crate) async fn download(&self, out: &mut std::fs::File) -> Result<u64, GetError> {
        use futures::StreamExt;
        use std::io::Write;
        self.counters.request();
        let result = self
            .store
            .get_opts(&self.path, GetOptions::default())
            .await
            .map_err(GetError::Store)?;
        let expected = result.meta.size;
        let mut stream = result.into_stream();
        let mut got = 0u64;
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(GetError::Body)?;
            self.counters.received(piece.len());
            got += piece.len() as u64;
            out.write_all(&piece).map_err(|e| {
                GetError::Store(object_store::Error::Generic {
                    store: "local file",
                    source: Box::new(e),
                })
            })?;
        }
        if got != expected {
            return Err(GetError::Length { expected, got });
        }
        Ok(got)
    }

    /// The object's length, from a HEAD request.
    pub(crate) async fn len(&self) -> Result<u64, GetError> {
        self.counters.request();
        use object_store::ObjectStoreExt;
        Ok(self
            .store
            .head(&self.path)
            .await
            .map_err(GetError::Store)?
            .size)
    }

    /// An I/O error for `what` of this object.
    pub(crate) fn io_error(&self, what: &str, error: GetError) -> io::Error {
        io::Error::new(
            kind_of(&error),
            format!("{}: {what}: {}", self.url, describe(&error)),
        )
    }
}

/// The I/O error kind of `error`.
pub(crate) fn kind_of(error: &GetError) -> io::ErrorKind {
    match error {
        GetError::Store(object_store::Error::NotFound { .. }) => io::ErrorKind::NotFound,
        GetError::Store(
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. },
        ) => io::ErrorKind::PermissionDenied,
        GetError::Length { .. } | GetError::Body(_) => io::ErrorKind::UnexpectedEof,
        _ => io::ErrorKind::Other,
    }
}

/// What went wrong, in words.
pub(crate) fn describe(error: &GetError) -> String {
    match error {
        GetError::RangesIgnored => {
            "the server ignores range requests (it answered with the whole object)".to_owned()
        }
        GetError::Store(e) => e.to_string(),
        GetError::Body(e) => format!("the answer broke off ({e}), after {BODY_ATTEMPTS} attempts"),
        GetError::Length { expected, got } => format!(
            "the server sent {got} bytes where {expected} were due (a body cut short), after {BODY_ATTEMPTS} attempts"
        ),
    }
}

/// Runs `future` on `runtime` and waits for it on this thread, which may be any thread (one of
/// another runtime included: the wait is a plain blocking receive).
pub(crate) fn block_on<T: Send + 'static>(
    runtime: &Runtime,
    future: impl Future<Output = T> + Send + 'static,
) -> io::Result<T> {
    let handle = runtime
        .handle()
        .ok_or_else(|| io::Error::other("the remote reader was shut down"))?;
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    handle.spawn(async move {
        let _ = send.send(future.await);
    });
    receive
        .recv()
        .map_err(|_| io::Error::other("a remote request was cancelled"))
}
