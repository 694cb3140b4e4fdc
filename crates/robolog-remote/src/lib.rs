//! Remote robot logs: an object behind an `http://`, `https://`, `s3://`, `gs://` or `az://` URL
//! read by ranged GETs as a positional [`Input`], so that robolog's indexed readers fetch only
//! what they need.
//!
//! - Opening sends one GET of the object's last bytes (which tells its length too): an indexed
//!   MCAP file's footer and summary are usually within them, so its summary costs that request
//!   and one of its first bytes. Azure Blob Storage answers no suffix range: there a HEAD
//!   request for the length comes first.
//! - A query announces the chunks it will read ([`robolog_query::ReadAt::prefetch`]): neighbouring ones are
//!   fetched by one request, a few requests in flight and at most 16 MiB held ahead of the reader
//!   and behind it, whatever the object's size; what was fetched when it was opened is not
//!   fetched again.
//! - What was fetched is read again without a request (the tail for the object's life, small
//!   reads up to a bound); everything else is one ranged GET.
//! - Requests are retried with backoff on transient errors (5xx, dropped connections, bodies
//!   cut short), and a body of the wrong length is never handed out.
//! - A server that ignores range requests is an error ([`RemoteError::RangesIgnored`]), unless
//!   downloading the whole object is allowed ([`RemoteOptions::allow_download`]).
//!
//! The requests go through the `object_store` crate; S3 credentials, region and endpoint come
//! from the usual `AWS_*` environment variables, else from the profile `AWS_PROFILE` names
//! (`default`) in `~/.aws/credentials` and `~/.aws/config`.
//!
//! ```
//! // Any URL robolog reads from:
//! assert!(robolog_remote::is_url("https://example.com/logs/drive.mcap"));
//! assert!(robolog_remote::is_url("s3://fleet/2026/drive.mcap"));
//! assert!(robolog_remote::is_url("gs://fleet/2026/drive.mcap"));
//! assert!(robolog_remote::is_url("az://fleet/2026/drive.mcap"));
//! assert!(!robolog_remote::is_url("logs/drive.mcap"));
//! // Opening one (here a server that is not there) is an error, not a panic.
//! let options = robolog_remote::RemoteOptions::new();
//! assert!(robolog_remote::Remote::open("http://127.0.0.1:9/none.mcap", &options).is_err());
//! // A scheme robolog does not read is an error that names the ones it does.
//! let err = robolog_remote::Remote::open("ftp://example.com/drive.mcap", &options).unwrap_err();
//! assert!(err.to_string().contains("http, https, s3, gs and az"), "{err}");
//! ```

use std::io;
use std::sync::Arc;

use object_store::GetRange;
use robolog_query::Input;

mod aws_files;
mod client;
mod object;

use client::{Counters, GetError, block_on, connect, describe, kind_of};
pub use client::{Fetched, fetched_total};
use object::Object;

/// Bytes fetched from the end of an object when it is opened: a log's footer and index are
/// there, and a request this size costs about what a small one does.
const TAIL: u64 = 192 << 10;

/// True when `input` names a remote object (`scheme://...` with a scheme robolog reads) rather
/// than a local path.
pub fn is_url(input: &str) -> bool {
    input.split_once("://").is_some_and(|(scheme, _)| {
        matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "s3" | "s3a" | "gs" | "az" | "abfs" | "abfss"
        )
    })
}

/// How to open a remote object.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RemoteOptions {
    allow_download: bool,
}

impl RemoteOptions {
    /// The defaults: a server that ignores range requests is an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether an object whose server ignores range requests is downloaded whole (to an
    /// anonymous temporary file) and read from there. Off by default: such a download may be
    /// many gigabytes where a few kilobytes were wanted.
    pub fn allow_download(mut self, on: bool) -> Self {
        self.allow_download = on;
        self
    }
}

/// Why a remote object could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is not one robolog reads.
    #[error("{url}: not a URL robolog reads: {reason}")]
    Url {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server answered a range request with the whole object.
    #[error(
        "{url}: the server ignores range requests (it answered a ranged GET with the whole object), so reading any part means downloading all of it; allow that with --allow-download"
    )]
    RangesIgnored {
        /// The URL.
        url: String,
    },
    /// The store refused or failed a request (after retries).
    #[error("{url}: {reason}")]
    Request {
        /// The URL.
        url: String,
        /// What the store said.
        reason: String,
        /// The kind of error, for callers that tell "not found" from the rest.
        kind: io::ErrorKind,
    },
    /// The store could not be set up.
    #[error("{url}: {source}")]
    Store {
        /// The URL.
        url: String,
        /// The `object_store` error.
        #[source]
        source: object_store::Error,
    },
    /// A local I/O error (the runtime, a download's temporary file).
    #[error("{url}: {source}")]
    Io {
        /// The URL.
        url: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl From<RemoteError> for io::Error {
    fn from(e: RemoteError) -> Self {
        let kind = match &e {
            RemoteError::Request { kind, .. } => *kind,
            RemoteError::Io { source, .. } => source.kind(),
            RemoteError::Url { .. } => io::ErrorKind::InvalidInput,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}

/// An open remote object: its [`Input`], and what reading it has cost so far.
#[derive(Debug, Clone)]
pub struct Remote {
    input: Input,
    counters: Arc<Counters>,
    downloaded: bool,
}

impl Remote {
    /// Opens the object at `url` with one ranged GET of its last bytes (or, when the server
    /// ignores ranges and `options` allow it, one GET of all of it).
    pub fn open(url: &str, options: &RemoteOptions) -> Result<Self, RemoteError> {
        let (client, runtime) = connect(url)?;
        let counters = Arc::clone(&client.counters);
        let io = |source: io::Error| RemoteError::Io {
            url: url.to_owned(),
            source,
        };
        let request = |error: GetError| RemoteError::Request {
            url: url.to_owned(),
            reason: describe(&error),
            kind: kind_of(&error),
        };
        let tail = {
            let client = client.clone();
            block_on(&runtime, async move {
                if client.suffix_ranges {
                    return client.get(GetRange::Suffix(TAIL)).await;
                }
                // A store without suffix ranges is asked for the object's length first.
                match client.len().await? {
                    0 => Ok((robolog_framing::Bytes::new(), 0..0, 0)),
                    len => {
                        client
                            .get(GetRange::Bounded(len.saturating_sub(TAIL)..len))
                            .await
                    }
                }
            })
            .map_err(io)?
        };
        let (bytes, range, len) = match tail {
            Ok(got) => got,
            Err(GetError::RangesIgnored) if options.allow_download => {
                let mut file = tempfile::tempfile().map_err(io)?;
                let got = {
                    let client = client.clone();
                    let mut target = file.try_clone().map_err(io)?;
                    block_on(&runtime, async move { client.download(&mut target).await })
                        .map_err(io)?
                };
                got.map_err(request)?;
                use std::io::Seek;
                file.rewind().map_err(io)?;
                return Ok(Self {
                    input: Input::from_file(file).map_err(io)?,
                    counters,
                    downloaded: true,
                });
            }
            Err(GetError::RangesIgnored) => {
                return Err(RemoteError::RangesIgnored {
                    url: url.to_owned(),
                });
            }
            Err(GetError::Store(e)) if !matches!(e, object_store::Error::NotFound { .. }) => {
                // An empty object has no last bytes to ask for: its length says so.
                let client2 = client.clone();
                match block_on(&runtime, async move { client2.len().await }).map_err(io)? {
                    Ok(0) => (robolog_framing::Bytes::new(), 0..0, 0),
                    _ => return Err(request(GetError::Store(e))),
                }
            }
            Err(e) => return Err(request(e)),
        };
        let object = Object::new(client, runtime, len, range.start, bytes);
        Ok(Self {
            input: Input::new(object),
            counters,
            downloaded: false,
        })
    }

    /// The object as an input for robolog's readers.
    pub fn input(&self) -> Input {
        self.input.clone()
    }

    /// The object's length in bytes.
    pub fn len(&self) -> u64 {
        self.input.len()
    }

    /// True when the object is empty.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// True when the object was downloaded whole (its server ignores range requests).
    pub fn downloaded(&self) -> bool {
        self.downloaded
    }

    /// Requests sent and bytes received so far.
    pub fn fetched(&self) -> Fetched {
        self.counters.get()
    }
}

/// Opens the object at `url` as an [`Input`] (see [`Remote::open`]).
pub fn open(url: &str, options: &RemoteOptions) -> Result<Input, RemoteError> {
    Remote::open(url, options).map(|r| r.input())
}

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
