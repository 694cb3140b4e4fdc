//! A real nginx on the loopback, serving files from a temporary folder, for the tests of remote
//! reading: the requests and bytes a command cost are counted from nginx's own access log.
//!
//! [`Nginx::start`] returns `None` (after saying why on stderr) when nginx is not installed,
//! unless `ROBOLOG_INTEROP=required` (as `.ci/run` sets, after installing it), where a missing
//! nginx fails the test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The configuration, shared with the Python tests (`@DIR@` and `@PORT@` to fill in).
const CONFIG: &str = include_str!("nginx.conf");

/// A running nginx, stopped when dropped.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// One line of the access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The path asked for.
    pub path: String,
    /// The status answered.
    pub status: u16,
    /// Body bytes sent.
    pub bytes: u64,
    /// The `Range` header, `-` when there was none.
    pub range: String,
}

fn binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nginx"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
    })
}

impl Nginx {
    /// Starts nginx on a free loopback port, serving `dir/www` (created empty; put files there
    /// with [`Nginx::root`]). Files under `www/noranges/` are served as by a server that ignores
    /// range requests (`max_ranges 0`), files under `www/slow/` at 2 MB/s per connection.
    /// `None` when nginx is missing and not required.
    pub fn start(dir: &Path) -> Option<Self> {
        let Some(nginx) = binary() else {
            if std::env::var("ROBOLOG_INTEROP").as_deref() == Ok("required") {
                panic!(
                    "ROBOLOG_INTEROP=required but nginx is not installed (apt-get install nginx)"
                );
            }
            eprintln!("skipping test: nginx is not installed (apt-get install nginx)");
            return None;
        };
        let www = dir.join("www");
        std::fs::create_dir_all(www.join("noranges")).expect("create the served folder");
        std::fs::create_dir_all(www.join("slow")).expect("create the served folder");
        std::fs::create_dir_all(dir.join("temp")).expect("create nginx's temporary folder");
        // A free port: bound and released just before nginx binds it.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let config = CONFIG
            .replace("@DIR@", &dir.display().to_string())
            .replace("@PORT@", &port.to_string());
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, config).expect("write nginx.conf");
        let child = Command::new(&nginx)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", nginx.display()));
        let server = Self {
            child,
            dir: dir.to_path_buf(),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen on port {port}: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// The folder served at `/`.
    pub fn root(&self) -> PathBuf {
        self.dir.join("www")
    }

    /// The URL of `path` (relative to [`Nginx::root`]).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// The requests served so far, oldest first (once nginx has logged them: it writes a line
    /// after sending the response).
    pub fn requests(&self) -> Vec<Request> {
        let log = crate::server_log::settled(&self.dir.join("access.log"));
        log.lines()
            .filter_map(|line| {
                let mut parts = line.splitn(5, ' ');
                Some(Request {
                    method: parts.next()?.to_owned(),
                    path: parts.next()?.to_owned(),
                    status: parts.next()?.parse().ok()?,
                    bytes: parts.next()?.parse().ok()?,
                    range: parts.next()?.trim_matches('"').to_owned(),
                })
            })
            .collect()
    }

    /// Forgets the requests served so far (empties the access log, which nginx appends to),
    /// once nginx has logged them: a late line would count for the next command.
    pub fn clear(&self) {
        crate::server_log::settled(&self.dir.join("access.log"));
        std::fs::write(self.dir.join("access.log"), b"").expect("empty the access log");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
