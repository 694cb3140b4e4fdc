//! An S3-compatible server on the loopback for the tests of `s3://` URLs: moto's server
//! (`moto_server`, from the pinned interop venv, see [`crate::interop`]), which speaks S3's
//! ranged GETs and needs nothing but Python. The requests a command cost are counted from the
//! server's own request log.
//!
//! [`S3::start`] returns `None` (after saying why on stderr) when the venv is missing, unless
//! `ROBOLOG_INTEROP=required`, where that fails the test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running S3 server, stopped when dropped.
#[derive(Debug)]
pub struct S3 {
    child: Child,
    python: PathBuf,
    log: PathBuf,
    port: u16,
}

impl S3 {
    /// Starts the server on a free loopback port, logging its requests into `dir`.
    pub fn start(dir: &Path) -> Option<Self> {
        let python = crate::interop::python()?;
        let server = python.with_file_name("moto_server");
        if !server.exists() {
            if std::env::var("ROBOLOG_INTEROP").as_deref() == Ok("required") {
                panic!(
                    "ROBOLOG_INTEROP=required but {} is missing: run scripts/interop-venv.sh",
                    server.display()
                );
            }
            eprintln!(
                "skipping test: {} is missing (run scripts/interop-venv.sh)",
                server.display()
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let log = dir.join("s3.log");
        let child = Command::new(&server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("create the server's log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", server.display()));
        let s3 = Self {
            child,
            python,
            log,
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "moto_server did not listen on port {port}: {}",
                std::fs::read_to_string(&s3.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(s3)
    }

    /// The environment that points an S3 client (robolog's, through object_store) at this
    /// server, with its fixed test credentials.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", "test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
        ]
    }

    /// Creates `bucket` and uploads `file` to it as `key` (with boto3, which moto brings).
    pub fn put(&self, bucket: &str, key: &str, file: &Path) {
        let script = format!(
            "import boto3, sys\n\
             s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{}', aws_access_key_id='test', aws_secret_access_key='test', region_name='us-east-1')\n\
             s3.create_bucket(Bucket=sys.argv[1])\n\
             s3.upload_file(sys.argv[3], sys.argv[1], sys.argv[2])\n",
            self.port
        );
        let status = Command::new(&self.python)
            .args(["-c", &script, bucket, key])
            .arg(file)
            .status()
            .expect("run boto3");
        assert!(status.success(), "uploading {} failed", file.display());
    }

    /// `(method, status)` of the requests of `path` (`/bucket/key`) served so far.
    pub fn requests(&self, path: &str) -> Vec<(String, u16)> {
        let log = crate::server_log::settled(&self.log);
        log.lines()
            .filter_map(|line| {
                // `127.0.0.1 - - [date] "GET /bucket/key HTTP/1.1" 206 -`, maybe coloured.
                let (method, target, status) =
                    crate::server_log::common_log_line(&without_colours(line))?;
                (target == path).then_some((method, status))
            })
            .collect()
    }
}

/// `line` without its terminal colour sequences (`ESC [ ... m`).
fn without_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
