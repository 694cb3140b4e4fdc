//! An Azure Blob Storage emulator on the loopback for the tests of `az://` URLs: Azurite's blob
//! service, installed from npm into `target/azurite` by `scripts/azurite.sh`; objects are
//! uploaded with the Azure SDK of the pinned interop venv (see [`crate::interop`]).
//!
//! [`Azurite::start`] returns `None` (after saying why on stderr) when Azurite or the venv is
//! missing, unless `ROBOLOG_INTEROP=required`, where that fails the test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::testdata::workspace_root;

/// The emulator's well-known account and key (public: every Azurite has them).
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// A running Azurite blob service, stopped when dropped.
#[derive(Debug)]
pub struct Azurite {
    child: Child,
    python: PathBuf,
    log: PathBuf,
    /// The requests served, one line each.
    access_log: PathBuf,
    port: u16,
}

impl Azurite {
    /// Starts the blob service on a free loopback port, with its files and log in `dir`.
    pub fn start(dir: &Path) -> Option<Self> {
        let server = workspace_root().join("target/azurite/node_modules/.bin/azurite-blob");
        if !server.exists() {
            if std::env::var("ROBOLOG_INTEROP").as_deref() == Ok("required") {
                panic!(
                    "ROBOLOG_INTEROP=required but {} is missing: run scripts/azurite.sh",
                    server.display()
                );
            }
            eprintln!(
                "skipping test: {} is missing (run scripts/azurite.sh)",
                server.display()
            );
            return None;
        }
        let python = crate::interop::python()?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let location = dir.join("azurite");
        std::fs::create_dir_all(&location).expect("create Azurite's folder");
        let log = dir.join("azurite.log");
        let access_log = dir.join("azurite-access.log");
        let child = Command::new(&server)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .arg("--location")
            .arg(&location)
            .args([
                "--skipApiVersionCheck",
                "--loose",
                "--disableProductStyleUrl",
            ])
            .stdin(Stdio::null())
            // Azurite writes its access log (common log format) to standard output.
            .stdout(std::fs::File::create(&access_log).expect("create Azurite's access log"))
            .stderr(std::fs::File::create(&log).expect("create Azurite's log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", server.display()));
        let azurite = Self {
            child,
            python,
            log,
            access_log,
            port,
        };
        // Node takes a while to load Azurite on a busy machine.
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "Azurite did not listen on port {port}: {}",
                std::fs::read_to_string(&azurite.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(azurite)
    }

    /// The environment that points an Azure client (robolog's, through object_store) at this
    /// emulator.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR", "true".to_owned()),
            (
                "AZURITE_BLOB_STORAGE_URL",
                format!("http://127.0.0.1:{}", self.port),
            ),
        ]
    }

    /// Creates `container` (unless it exists) and uploads `file` to it as `blob`.
    pub fn put(&self, container: &str, blob: &str, file: &Path) {
        let script = format!(
            "import sys\n\
             from azure.storage.blob import BlobServiceClient\n\
             service = BlobServiceClient.from_connection_string('DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint=http://127.0.0.1:{}/{ACCOUNT};')\n\
             container = service.get_container_client(sys.argv[1])\n\
             if not container.exists():\n    container.create_container()\n\
             with open(sys.argv[3], 'rb') as data:\n    container.upload_blob(sys.argv[2], data, overwrite=True)\n",
            self.port
        );
        let status = Command::new(&self.python)
            .args(["-c", &script, container, blob])
            .arg(file)
            .status()
            .expect("run the Azure SDK");
        assert!(status.success(), "uploading {} failed", file.display());
    }

    /// `(method, path, status)` of the requests served so far, oldest first (the path as asked
    /// for, the account first: `/devstoreaccount1/fleet/2026/drive.mcap`).
    pub fn requests(&self) -> Vec<(String, String, u16)> {
        crate::server_log::settled(&self.access_log)
            .lines()
            .filter_map(crate::server_log::common_log_line)
            .collect()
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
