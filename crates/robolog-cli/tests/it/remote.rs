//! Remote inputs: the CLI reads an MCAP file from a real nginx on the loopback, and what that
//! cost is counted from nginx's own access log: `info` in two requests, a short one-topic `cat`
//! in a small fraction of the file, the outputs those of the same file read locally, and a
//! server that ignores range requests refused unless `--allow-download`.

use std::collections::BTreeMap;
use std::path::Path;

use robolog::mcap::{Compression, Message, WriteOptions, Writer};
use robolog_testkit::nginx::{Nginx, Request};

use crate::support::{robolog, robolog_peak_memory, robolog_piped};

/// One minute of a recording: `/camera` at 20 Hz (16 KiB images), `/imu` at 200 Hz and `/tf`
/// at 50 Hz, in chunks of about 1 MiB (about 20 MB in all).
fn recording(path: &Path) {
    let opts = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let camera = w
        .register_channel("/camera", "raw", 0, BTreeMap::new())
        .unwrap();
    let imu = w
        .register_channel("/imu", "raw", 0, BTreeMap::new())
        .unwrap();
    let tf = w
        .register_channel("/tf", "raw", 0, BTreeMap::new())
        .unwrap();
    let start = 1_700_000_000_000_000_000u64;
    let ms = 1_000_000u64;
    let mut image = vec![0u8; 16 << 10];
    for t in (0..60_000u64).step_by(5) {
        let time = start + t * ms;
        let mut write = |channel_id, sequence: u64, data: &[u8]| {
            w.write_message(&Message {
                channel_id,
                sequence: sequence as u32,
                log_time: time,
                publish_time: time,
                data,
            })
            .unwrap();
        };
        write(imu, t / 5, &t.to_le_bytes());
        if t % 20 == 0 {
            write(tf, t / 20, &[7; 128]);
        }
        if t % 50 == 0 {
            for (i, b) in image.iter_mut().enumerate() {
                *b = (i as u64 ^ t) as u8;
            }
            write(camera, t / 50, &image);
        }
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn totals(requests: &[Request]) -> (usize, u64) {
    (requests.len(), requests.iter().map(|r| r.bytes).sum())
}

/// A command's `--json` output without the input's name (`file`, `path`), the one thing that
/// differs between a URL and a local file.
fn nameless(json: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(json).unwrap();
    if let Some(o) = value.as_object_mut() {
        o.remove("file");
        o.remove("path");
    }
    value
}

/// The arguments of `cat --json` of `/imu` over two seconds (the input follows).
const TWO_SECONDS_OF_IMU: [&str; 8] = [
    "cat",
    "--json",
    "--topic",
    "/imu",
    "--start-secs",
    "1700000030",
    "--end-secs",
    "1700000032",
];

fn stdout(args: &[&str]) -> String {
    let run = robolog(args).expect(0);
    run.stdout.clone()
}

#[test]
fn an_indexed_mcap_file_is_read_over_http_with_few_requests() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("drive.mcap");
    recording(&local);
    let local = local.to_str().unwrap().to_owned();
    let size = std::fs::metadata(&local).unwrap().len();
    assert!(size > 19 << 20, "{size}");
    let url = nginx.url("drive.mcap");

    // `info`: the same summary, from the tail of the file and its first bytes.
    let info = stdout(&["info", "--json", &url]);
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(count <= 2, "{requests:#?}");
    assert!(requests.iter().all(|r| r.status == 206), "{requests:#?}");
    assert!(bytes < size / 20, "{bytes} of {size}");
    assert_eq!(
        nameless(&info),
        nameless(&stdout(&["info", "--json", &local]))
    );

    // One topic over two seconds: the chunks of those two seconds, nothing more.
    nginx.clear();
    let remote = two_seconds_of_imu(&url);
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(bytes < size / 8, "{bytes} of {size}: {requests:#?}");
    assert!(count <= 6, "{requests:#?}");
    let here = two_seconds_of_imu(&local);
    assert_eq!(remote.lines().count(), 400);
    assert_eq!(remote, here);

    // Every message, in order: the same bytes as read locally, the file fetched about once.
    nginx.clear();
    let remote = stdout(&["cat", "--json", &url]);
    let (_, bytes) = totals(&nginx.requests());
    assert!(bytes < size + size / 10, "{bytes} of {size}");
    assert_eq!(remote, stdout(&["cat", "--json", &local]));
}

#[test]
fn whole_file_commands_read_a_url_as_they_read_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("drive.mcap");
    recording(&local);
    let local = local.to_str().unwrap().to_owned();
    let url = nginx.url("drive.mcap");

    // check: the same report (but for the file's name), the object read once as it streams
    // in, in pieces.
    let (here, count, bytes) = same_check(&nginx, &url, &local);
    assert_eq!(here["messages"], 16_200, "{here}");
    let size = std::fs::metadata(&local).unwrap().len();
    assert!(count > 2, "fetched in pieces, not whole");
    eprintln!("check drive.mcap: {count} requests, {bytes} bytes of {size}");

    // convert: the same bytes out, the object read as it streams in, once.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (from_url, from_file) = (out.join("url.mcap"), out.join("file.mcap"));
    nginx.clear();
    for (input, output) in [(&url, &from_url), (&local, &from_file)] {
        robolog(["convert", input, output.to_str().unwrap()]).expect(0);
    }
    let size = std::fs::metadata(&local).unwrap().len();
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(bytes > size - size / 10, "{bytes} of {size}");
    assert!(bytes < size + size / 20, "{bytes} of {size}: {requests:#?}");
    assert!(count > 2, "fetched in pieces, not whole: {requests:#?}");
    eprintln!("convert: {count} requests, {bytes} bytes of {size}");
    assert!(std::fs::read(&from_url).unwrap() == std::fs::read(&from_file).unwrap());
    let converted: serde_json::Value =
        serde_json::from_str(&stdout(&["info", "--json", from_url.to_str().unwrap()])).unwrap();
    assert_eq!(converted["message_count"], here["messages"], "{converted}");
}

#[test]
fn a_server_that_ignores_ranges_is_refused_unless_downloading_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("noranges/drive.mcap");
    recording(&local);
    let local = local.to_str().unwrap().to_owned();
    let url = nginx.url("noranges/drive.mcap");

    let run = robolog(["info", &url]).expect(1);
    assert!(
        run.stderr.contains("ignores range requests"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--allow-download"), "{}", run.stderr);

    nginx.clear();
    let remote = stdout(&["info", "--json", "--allow-download", &url]);
    let requests = nginx.requests();
    assert_eq!(
        requests.last().map(|r| (r.status, r.range.as_str())),
        Some((200, "-"))
    );
    assert_eq!(
        nameless(&remote),
        nameless(&stdout(&["info", "--json", &local]))
    );
}

#[test]
fn a_missing_object_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let url = nginx.url("nothing-here.mcap");
    let run = robolog(["info", &url]).expect(1);
    assert!(run.stderr.contains("nothing-here.mcap"), "{}", run.stderr);
    assert!(
        run.stderr.to_lowercase().contains("not found"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_indexed_mcap_file_is_read_from_s3_with_few_requests() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s3) = robolog_testkit::s3::S3::start(dir.path()) else {
        return;
    };
    let local = dir.path().join("drive.mcap");
    recording(&local);
    let local = local.to_str().unwrap().to_owned();
    s3.put("fleet", "2026/drive.mcap", Path::new(&local));
    let url = "s3://fleet/2026/drive.mcap";
    let run = |args: &[&str]| {
        let output = crate::support::command(args)
            .envs(s3.env())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let path = "/fleet/2026/drive.mcap";
    let before = s3.requests(path).len();
    let remote = nameless(&run(&["info", "--json", url]));
    let requests = s3.requests(path)[before..].to_vec();
    assert!(!requests.is_empty() && requests.len() <= 2, "{requests:?}");
    assert!(
        requests.iter().all(|r| r == &("GET".to_owned(), 206)),
        "{requests:?}"
    );
    assert_eq!(remote, nameless(&stdout(&["info", "--json", &local])));

    let before = s3.requests(path).len();
    let remote = run(&[&TWO_SECONDS_OF_IMU[..], &[url]].concat());
    let requests = s3.requests(path)[before..].to_vec();
    // The tail, the first bytes, and the few chunks of those two seconds in one request.
    assert!(requests.len() <= 4, "{requests:?}");
    assert_eq!(remote.lines().count(), 400);
    assert_eq!(remote, two_seconds_of_imu(&local));
}

/// `info` of the remote file and of the local one, but for the file's name.
fn same_info(url: &str, local: &str) -> serde_json::Value {
    let here = nameless(&stdout(&["info", "--json", local]));
    assert_eq!(nameless(&stdout(&["info", "--json", url])), here);
    here
}

/// `cat --json` of `/imu` over two seconds.
fn two_seconds_of_imu(input: &str) -> String {
    stdout(&[&TWO_SECONDS_OF_IMU[..], &[input]].concat())
}

#[test]
fn a_bddf_file_is_read_over_http_by_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let mcap = dir.path().join("drive.mcap");
    recording(&mcap);
    let local = nginx.root().join("drive.bddf");
    robolog(["convert", mcap.to_str().unwrap(), local.to_str().unwrap()]).expect(0);
    let local = local.to_str().unwrap().to_owned();
    let size = std::fs::metadata(&local).unwrap().len();
    let url = nginx.url("drive.bddf");

    // `info`: the tail (trailer, file index), the block indexes before it, the first bytes
    // (file and series descriptors).
    nginx.clear();
    let info = same_info(&url, &local);
    assert_eq!(info["message_count"], 16_200, "{info}");
    let requests: Vec<Request> = nginx
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("drive.bddf"))
        .collect();
    let (count, bytes) = totals(&requests);
    assert!(count <= 4, "{requests:#?}");
    assert!(requests.iter().all(|r| r.status == 206), "{requests:#?}");
    assert!(bytes < size / 20, "{bytes} of {size}: {requests:#?}");

    // One topic over two seconds: those blocks, fetched ahead together.
    nginx.clear();
    let remote = two_seconds_of_imu(&url);
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(count <= 6, "{requests:#?}");
    assert!(bytes < size / 8, "{bytes} of {size}: {requests:#?}");
    assert_eq!(remote.lines().count(), 400);
    assert_eq!(remote, two_seconds_of_imu(&local));

    // Every message, the checksum checked: the same output as read locally, the file fetched
    // once (the SHA-1 is computed from the blocks as they come, not by a second pass).
    nginx.clear();
    let remote = stdout(&["cat", "--json", &url]);
    let (_, bytes) = totals(&nginx.requests());
    assert!(bytes > size - size / 10, "{bytes} of {size}");
    assert!(bytes < size + size / 20, "{bytes} of {size}");
    assert_eq!(remote, stdout(&["cat", "--json", &local]));
    assert_eq!(remote.lines().count(), 16_200);
}

/// `check --json` of `url` and of `local` are the same (but for the file's name), and the
/// object was fetched once, as it streamed in: the report, and the requests and bytes that
/// cost.
fn same_check(nginx: &Nginx, url: &str, local: &str) -> (serde_json::Value, usize, u64) {
    nginx.clear();
    let remote = nameless(&stdout(&["check", "--json", url]));
    let requests = nginx.requests();
    let here = nameless(&stdout(&["check", "--json", local]));
    assert_eq!(remote, here);
    assert_eq!(here["valid"], true, "{here}");
    assert!(here["messages"].as_u64().unwrap() > 10_000, "{here}");
    let size = std::fs::metadata(local).unwrap().len();
    let (count, bytes) = totals(&requests);
    assert!(requests.iter().all(|r| r.status == 206), "{requests:#?}");
    assert!(bytes > size - size / 10, "{bytes} of {size}");
    assert!(bytes < size + size / 20, "{bytes} of {size}: {requests:#?}");
    (here, count, bytes)
}

#[test]
fn a_bag_and_a_bddf_file_are_checked_from_a_url_as_they_stream_in() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let bag = nginx.root().join("drive.bag");
    bag_recording(&bag);
    let mcap = dir.path().join("drive.mcap");
    recording(&mcap);
    let bddf = nginx.root().join("drive.bddf");
    robolog(["convert", mcap.to_str().unwrap(), bddf.to_str().unwrap()]).expect(0);
    for (name, local) in [("drive.bag", &bag), ("drive.bddf", &bddf)] {
        let size = std::fs::metadata(local).unwrap().len();
        let (_, count, bytes) = same_check(&nginx, &nginx.url(name), local.to_str().unwrap());
        eprintln!("check {name}: {count} requests, {bytes} bytes of {size}");
    }
}

/// The recording as a ROS 1 bag 2.0 (chunks of 768 KiB, as `rosbag record` writes):
/// `/camera` as `std_msgs/String` of 16 KiB, `/imu` and `/tf` as `std_msgs/UInt64`.
fn bag_recording(path: &Path) {
    use robolog::rosbag::{WriteOptions, Writer};
    let file = std::fs::File::create(path).unwrap();
    let mut w = Writer::with_options(file, WriteOptions::new()).unwrap();
    let uint64 = (
        "std_msgs/UInt64",
        "1b2a79973e8bf53d7b53acb71299cb57",
        "uint64 data\n",
    );
    let string = (
        "std_msgs/String",
        "992ce8a1687cec8c8bd883ec73ca41d1",
        "string data\n",
    );
    let camera = w
        .add_connection("/camera", string.0, string.1, string.2)
        .unwrap();
    let imu = w
        .add_connection("/imu", uint64.0, uint64.1, uint64.2)
        .unwrap();
    let tf = w
        .add_connection("/tf", uint64.0, uint64.1, uint64.2)
        .unwrap();
    let start = 1_700_000_000_000_000_000u64;
    let ms = 1_000_000u64;
    let mut image = vec![0u8; 4 + (16 << 10)];
    for t in (0..60_000u64).step_by(5) {
        let time = start + t * ms;
        w.write(imu, time, &(t / 5).to_le_bytes()).unwrap();
        if t % 20 == 0 {
            w.write(tf, time, &(t / 20).to_le_bytes()).unwrap();
        }
        if t % 50 == 0 {
            image[..4].copy_from_slice(&(16u32 << 10).to_le_bytes());
            for (i, b) in image[4..].iter_mut().enumerate() {
                *b = b'a' + ((i as u64 ^ t) % 26) as u8;
            }
            w.write(camera, time, &image).unwrap();
        }
    }
    w.finish().unwrap();
}

#[test]
fn a_bag_is_read_over_http_by_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("drive.bag");
    bag_recording(&local);
    let local = local.to_str().unwrap().to_owned();
    let size = std::fs::metadata(&local).unwrap().len();
    let url = nginx.url("drive.bag");

    // `info`: the tail (the index section), the first bytes (the file header), and the chunk
    // headers (for the chunks' compression and sizes), which are small.
    nginx.clear();
    let info = same_info(&url, &local);
    assert_eq!(info["message_count"], 16_200, "{info}");
    let chunks = info["chunks"]["count"].as_u64().unwrap();
    assert!(chunks > 20, "{info}");
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(count as u64 <= 2 + chunks, "{requests:#?}");
    assert!(bytes < size / 20, "{bytes} of {size}: {requests:#?}");

    // One topic over two seconds: only the chunks of those seconds, not every chunk header.
    nginx.clear();
    let remote = two_seconds_of_imu(&url);
    let requests = nginx.requests();
    let (count, bytes) = totals(&requests);
    assert!(count <= 6, "{requests:#?}");
    assert!(bytes < size / 8, "{bytes} of {size}: {requests:#?}");
    assert_eq!(remote.lines().count(), 400);
    assert_eq!(remote, two_seconds_of_imu(&local));
}

#[test]
fn a_faulty_server_is_retried_or_a_clear_error_never_a_wrong_output() {
    use robolog_testkit::faulty::{Fault, serve};
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("drive.mcap");
    recording(&local);
    let data = std::fs::read(&local).unwrap();
    let local = local.to_str().unwrap().to_owned();
    let here_info = stdout(&["info", "--json", &local]);
    let here_cat = two_seconds_of_imu(&local);

    // Every third request fails, each way in turn: retried, the outputs those of the file.
    for fault in [Fault::Error500, Fault::Drop, Fault::Truncate] {
        let server = serve(data.clone(), "drive.mcap", move |n| {
            if n % 3 == 1 { fault } else { Fault::None }
        });
        let remote = nameless(&stdout(&["info", "--json", server.url()]));
        assert_eq!(remote, nameless(&here_info), "{fault:?}");
        assert_eq!(two_seconds_of_imu(server.url()), here_cat, "{fault:?}");
        assert!(
            server.log().iter().any(|(f, _)| *f == fault),
            "{fault:?}: {:?}",
            server.log()
        );
    }

    // A server that keeps failing after the first answer: exit 1, an error naming the URL and
    // what went wrong, nothing on standard output.
    for fault in [Fault::Error500, Fault::Drop, Fault::Truncate] {
        let server = serve(data.clone(), "drive.mcap", move |n| {
            if n == 0 { Fault::None } else { fault }
        });
        let run = robolog(["cat", "--json", "--topic", "/imu", server.url()]).expect(1);
        assert!(run.stdout.is_empty(), "{fault:?}: {}", run.stdout);
        assert!(
            run.stderr.contains(server.url()),
            "{fault:?}: {}",
            run.stderr
        );
        if fault == Fault::Error500 {
            assert!(run.stderr.contains("500"), "{}", run.stderr);
        }
        assert!(server.requests() >= 3, "{fault:?}: retried");
    }
}

#[test]
fn s3_settings_come_from_the_aws_files_of_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s3) = robolog_testkit::s3::S3::start(dir.path()) else {
        return;
    };
    let local = dir.path().join("drive.mcap");
    recording(&local);
    s3.put("fleet", "2026/drive.mcap", &local);
    let endpoint = s3
        .env()
        .into_iter()
        .find(|(k, _)| *k == "AWS_ENDPOINT")
        .map(|(_, v)| v)
        .unwrap();
    // A home with the two files: the profile `robot` has the keys, region and endpoint; the
    // default profile points nowhere useful.
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n\
         [robot]\naws_access_key_id = test\naws_secret_access_key = test\n",
    )
    .unwrap();
    std::fs::write(
        home.join(".aws/config"),
        format!(
            "[default]\nregion = us-east-1\nendpoint_url = http://127.0.0.1:9\n\n\
             [profile robot]\nregion = us-east-1\nendpoint_url = {endpoint}\n"
        ),
    )
    .unwrap();
    let run = |profile: Option<&str>| {
        let mut command = crate::support::command(["info", "--json", "s3://fleet/2026/drive.mcap"]);
        for (key, _) in std::env::vars() {
            if key.starts_with("AWS_") {
                command.env_remove(key);
            }
        }
        command.env("HOME", &home);
        if let Some(profile) = profile {
            command.env("AWS_PROFILE", profile);
        }
        command.output().unwrap()
    };
    let output = run(Some("robot"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let remote: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let here: serde_json::Value =
        serde_json::from_str(&stdout(&["info", "--json", local.to_str().unwrap()])).unwrap();
    assert_eq!(remote["message_count"], here["message_count"]);
    assert_eq!(remote["channels"], here["channels"]);
    // Without AWS_PROFILE, the default profile's endpoint (nothing listens there): an error.
    let output = run(None);
    assert_eq!(output.status.code(), Some(1));
}

/// `info --json` and a two-second `/imu` cat of `url` with `env`: the outputs of the local
/// file `local`.
fn same_outputs_from_a_store(env: &[(&'static str, String)], url: &str, local: &str) {
    let run = |args: &[&str]| {
        let output = crate::support::command(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(
        nameless(&run(&["info", "--json", url])),
        nameless(&stdout(&["info", "--json", local]))
    );
    let remote = run(&[&TWO_SECONDS_OF_IMU[..], &[url]].concat());
    assert_eq!(remote.lines().count(), 400);
    assert_eq!(remote, two_seconds_of_imu(local));
}

#[test]
fn an_mcap_file_is_read_from_google_cloud_storage() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("drive.mcap");
    recording(&local);
    let objects = [("fleet", "2026/drive.mcap", local.as_path())];
    let Some(gcs) = robolog_testkit::gcs::Gcs::start(dir.path(), &objects) else {
        return;
    };
    let local = local.to_str().unwrap();
    let url = "gs://fleet/2026/drive.mcap";
    same_outputs_from_a_store(&gcs.env(), url, local);
    // What that cost, from the emulator's log: `info` the tail and the first bytes, the cat
    // those again (a new process) and the chunks of two seconds.
    let requests: Vec<_> = gcs
        .requests()
        .into_iter()
        .filter(|(_, path, _)| path.contains("drive"))
        .collect();
    assert!(
        requests.len() <= 6 && requests.iter().all(|(m, _, s)| m == "GET" && *s == 206),
        "{requests:?}"
    );
}

#[test]
fn an_mcap_file_is_read_from_azure_blob_storage() {
    let dir = tempfile::tempdir().unwrap();
    let Some(azurite) = robolog_testkit::azure::Azurite::start(dir.path()) else {
        return;
    };
    let local = dir.path().join("drive.mcap");
    recording(&local);
    azurite.put("fleet", "2026/drive.mcap", &local);
    same_outputs_from_a_store(
        &azurite.env(),
        "az://fleet/2026/drive.mcap",
        local.to_str().unwrap(),
    );
    // What that cost, from the emulator's access log: per process a HEAD (Azure answers no
    // suffix range), the tail and the first bytes; for the cat, the chunks of two seconds. The
    // test's own upload (a PUT) aside.
    let requests: Vec<_> = azurite
        .requests()
        .into_iter()
        .filter(|(method, path, _)| method != "PUT" && path.contains("drive"))
        .collect();
    let heads = requests.iter().filter(|(m, _, s)| m == "HEAD" && *s == 200);
    let gets = requests.iter().filter(|(m, _, s)| m == "GET" && *s == 206);
    assert_eq!(heads.count(), 2, "{requests:?}");
    assert_eq!(gets.count(), requests.len() - 2, "{requests:?}");
    assert!(requests.len() <= 8, "{requests:?}");
}

/// Damaged MCAP files: from the test data (cut inside a chunk, a chunk CRC that does not
/// match, a record length past the end), and a sample with flipped compressed bytes in one
/// chunk and a corrupt length in another, after which recovery resynchronises.
fn damaged_mcap_files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = [
        "samples/demo-zstd-truncated.mcap",
        "bad/mcap/cut-mid-chunk.mcap",
        "bad/mcap/chunk-crc-mismatch.mcap",
        "bad/mcap/record-length-huge.mcap",
        "bad/mcap/message-on-undeclared-channel.mcap",
    ]
    .iter()
    .map(|name| {
        let file = name.rsplit('/').next().unwrap().to_owned();
        (file, robolog_testkit::testdata::read(name))
    })
    .collect();
    let mut data = robolog_testkit::testdata::read("samples/demo-zstd.mcap");
    let chunks = chunk_offsets(&data);
    for b in &mut data[chunks[2] + 200..chunks[2] + 216] {
        *b ^= 0x5A;
    }
    data[chunks[4] + 1..chunks[4] + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
    files.push(("flipped-and-long.mcap".to_owned(), data));
    files
}

/// Where the chunks of an MCAP file start, from its index.
fn chunk_offsets(data: &[u8]) -> Vec<usize> {
    let reader = robolog::mcap::McapReader::open(robolog::Bytes::from(data.to_vec())).unwrap();
    let offsets: Vec<usize> = reader
        .summary()
        .chunk_indexes
        .iter()
        .map(|c| c.chunk_start_offset as usize)
        .collect();
    assert!(offsets.len() >= 5, "{offsets:?}");
    offsets
}

/// `recover --json INPUT OUT`, given `stdin` for standard input: the exit code, the report and
/// the output's bytes.
fn recovered(input: &str, out: &Path, stdin: Option<&[u8]>) -> (i32, serde_json::Value, Vec<u8>) {
    let args = ["recover", "--json", input, out.to_str().unwrap()];
    let run = match stdin {
        Some(bytes) => robolog_piped(args, bytes),
        None => robolog(args),
    };
    assert!(matches!(run.code, 0 | 3), "{}: {}", run.code, run.stderr);
    let report = run.json();
    (run.code, report, std::fs::read(out).unwrap())
}

/// Damaged bags: a killed recording (unindexed, its last chunk cut), an unindexed one, a 1.2
/// bag, and one with flipped bytes in an LZ4 chunk (salvage keeps what decodes, then goes on);
/// and damaged BDDF files.
fn damaged_bags_and_bddf_files() -> Vec<(String, Vec<u8>)> {
    let read =
        |name: &str| robolog_testkit::testdata::read(format!("bags/generated/ros_comm/{name}"));
    let mut files: Vec<(String, Vec<u8>)> =
        ["v20_killed.bag", "v20_unindexed.bag", "v12_unindexed.bag"]
            .iter()
            .map(|name| (name.to_string(), read(name)))
            .collect();
    let mut data = read("ref_lz4.bag");
    let bag = robolog::rosbag::Bag::open(data.clone()).unwrap();
    let chunk = bag.chunks().nth(2).unwrap().position as usize;
    for b in &mut data[chunk + 300..chunk + 340] {
        *b ^= 0x5A;
    }
    files.push(("flipped-lz4.bag".to_owned(), data));
    // And BDDF files: cut inside a block, a flipped bit (the checksum says so).
    for name in ["sample-truncated.bddf", "sample-bitflip.bddf"] {
        files.push((
            name.to_owned(),
            robolog_testkit::testdata::read(format!("bddf/{name}")),
        ));
    }
    files
}

#[test]
fn recover_of_a_url_or_a_pipe_streams_the_input_and_writes_what_the_file_gives() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    for (name, data) in damaged_mcap_files()
        .into_iter()
        .chain(damaged_bags_and_bddf_files())
    {
        let out = dir
            .path()
            .join(format!("out.{}", name.rsplit('.').next().unwrap()));
        let local = nginx.root().join(&name);
        std::fs::write(&local, &data).unwrap();
        let (code, report, bytes) = recovered(local.to_str().unwrap(), &out, None);
        assert!(report["messages_recovered"].as_u64().is_some(), "{report}");
        nginx.clear();
        let remote = recovered(&nginx.url(&name), &out, None);
        let requests = nginx.requests();
        assert_eq!(remote.0, code, "{name}");
        assert_eq!(remote.1, report, "{name}");
        assert!(
            remote.2 == bytes,
            "{name}: the output differs from the file's"
        );
        // Read once: a file this small is all in the tail fetched when it was opened, which
        // its format, its layout and the stream are read from.
        let (count, fetched) = totals(&requests);
        let size = data.len() as u64;
        assert!(requests.iter().all(|r| r.status == 206), "{requests:#?}");
        assert_eq!((count, fetched), (1, size), "{name}: {requests:#?}");
        let piped = recovered("-", &out, Some(&data));
        assert_eq!(piped.0, code, "{name}");
        assert_eq!(piped.1, report, "{name}");
        assert!(
            piped.2 == bytes,
            "{name}: the output differs from the file's"
        );
    }
}

/// Endless 64 KiB payloads of pseudo-random (incompressible) bytes, the same on every run.
fn random_payloads() -> impl Iterator<Item = Vec<u8>> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    std::iter::repeat_with(move || {
        let mut payload = vec![0u8; 64 << 10];
        for word in payload.chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        payload
    })
}

/// About 80 MB of incompressible messages of 64 KiB, in zstd chunks of about 1 MiB.
fn large_recording(path: &Path) {
    let opts = WriteOptions::new()
        .compression(Compression::Zstd)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(std::fs::File::create(path).unwrap(), opts).unwrap();
    let channel = w
        .register_channel("/lidar", "raw", 0, BTreeMap::new())
        .unwrap();
    for (i, payload) in (0..1_250u64).zip(random_payloads()) {
        let time = 1_700_000_000_000_000_000 + i * 100_000_000;
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: time,
            publish_time: time,
            data: &payload,
        })
        .unwrap();
    }
    w.finish().unwrap();
}

/// Recovers the large object `name` in nginx's folder from its URL, beside the small test file
/// `small` (what recovering any URL costs: the program, its runtime, its buffers), and from
/// the file on disk. The object must stream in once (its tail and first bytes, fetched when it
/// was opened, not again) and never sit in memory whole: what is held of it at once (at most
/// 16 MiB fetched ahead and behind, the piece being read, the recovery's window, with the
/// allocator's slack) stays well below the 75 MiB and more the object takes; both outputs are
/// the same. Returns the report and the peak memory of recovering the small file (`None`
/// where memory cannot be measured).
#[allow(clippy::print_stderr)] // the figures measured, for the test's log
fn recover_large_url(
    nginx: &Nginx,
    dir: &Path,
    name: &str,
    small: &str,
) -> Option<(serde_json::Value, u64)> {
    let ext = name.rsplit('.').next().unwrap();
    let local = nginx.root().join(name);
    let size = std::fs::metadata(&local).unwrap().len();
    assert!(size > 75 << 20, "{size}");
    let small_name = format!("small.{ext}");
    std::fs::write(
        nginx.root().join(&small_name),
        robolog_testkit::testdata::read(small),
    )
    .unwrap();
    let small_out = dir.join(format!("small-out.{ext}"));
    let small_url = nginx.url(&small_name);
    let (_, baseline) = robolog_peak_memory(["recover", &small_url, small_out.to_str().unwrap()])?;

    let url = nginx.url(name);
    let from_url = dir.join(format!("url.{ext}"));
    nginx.clear();
    let (code, peak) = robolog_peak_memory(["recover", &url, from_url.to_str().unwrap()])?;
    let requests = nginx.requests();
    assert_eq!(code, 3, "data was lost");
    let (count, fetched) = totals(&requests);
    eprintln!(
        "recover of a {size}-byte URL: peak resident memory {peak} bytes ({baseline} for a small one), {count} requests, {fetched} bytes fetched"
    );
    assert_eq!(fetched, size);
    assert!(
        peak.saturating_sub(baseline) < 48 << 20,
        "peak resident memory {peak} (of a small object: {baseline}) for a {size}-byte object"
    );

    let from_file = dir.join(format!("file.{ext}"));
    let (_, report, bytes) = recovered(local.to_str().unwrap(), &from_file, None);
    assert!(std::fs::read(&from_url).unwrap() == bytes);
    Some((report, baseline))
}

#[test]
fn recover_of_a_large_url_holds_a_window_of_it_not_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("large.mcap");
    large_recording(&local);
    // A corrupt length in the middle (recovery resynchronises after it), cut inside the last
    // full chunk (the one after it holds the last two messages).
    let mut data = std::fs::read(&local).unwrap();
    let chunks = chunk_offsets(&data);
    let middle = chunks[chunks.len() / 2];
    data[middle + 1..middle + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
    data.truncate(chunks[chunks.len() - 2] + 300_000);
    std::fs::write(&local, &data).unwrap();
    let Some((report, baseline)) =
        recover_large_url(&nginx, dir.path(), "large.mcap", "samples/demo-zstd.mcap")
    else {
        return;
    };
    assert_eq!(report["details"]["chunks_partial"], 2, "{report}");
    assert!(
        report["messages_recovered"].as_u64().unwrap() > 1_150,
        "{report}"
    );

    // Without a summary, `info` scans the file up to the corrupt length, through a window, and
    // reads again only what the chunk there can be decoded from.
    let url = nginx.url("large.mcap");
    nginx.clear();
    let Some((code, peak)) = robolog_peak_memory(["info", &url]) else {
        return;
    };
    let (_, fetched) = totals(&nginx.requests());
    assert_eq!(code, 1, "the damage is said in the exit status");
    assert!(
        peak.saturating_sub(baseline) < 48 << 20,
        "info: peak resident memory {peak} (recovering a small object: {baseline})"
    );
    // The half before the damage twice (scanned, then its chunks counted) and what was fetched
    // ahead, not all of the object once more.
    assert!(
        fetched < (data.len() * 5 / 4) as u64,
        "{fetched} bytes fetched"
    );
    let remote = robolog(["info", "--json", &url]);
    let file = robolog(["info", "--json", local.to_str().unwrap()]);
    assert_eq!(nameless(&remote.stdout), nameless(&file.stdout));
    assert!(remote.stdout.contains("no footer"), "{}", remote.stdout);
}

/// About 80 MB of incompressible messages of 64 KiB in uncompressed chunks, cut inside its
/// last full chunk (the rest and the index section are lost): what a recorder that lost power leaves.
fn large_killed_bag(path: &Path) {
    let mut writer = robolog::rosbag::Writer::new(std::fs::File::create(path).unwrap()).unwrap();
    let conn = writer
        .add_connection(
            "/lidar",
            "std_msgs/UInt8MultiArray",
            "82373f1612381bb6ee473b5cd6f5d89c",
            "",
        )
        .unwrap();
    for (i, payload) in (0..1_250u64).zip(random_payloads()) {
        writer
            .write(conn, 1_700_000_000_000_000_000 + i * 100_000_000, &payload)
            .unwrap();
    }
    writer.finish().unwrap();
    let bag = robolog::rosbag::Bag::open(std::fs::read(path).unwrap()).unwrap();
    // The last full chunk (the one after it holds the last two messages).
    let chunks: Vec<u64> = bag.chunks().map(|c| c.position).collect();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(chunks[chunks.len() - 2] + 300_000).unwrap();
}

#[test]
fn recover_and_info_of_a_large_unindexed_bag_url_hold_a_window_of_it_not_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("large.bag");
    large_killed_bag(&local);
    let Some((report, baseline)) = recover_large_url(
        &nginx,
        dir.path(),
        "large.bag",
        "bags/generated/ros_comm/v20_killed.bag",
    ) else {
        return;
    };
    // The complete chunks, and the complete messages of the cut one.
    assert_eq!(report["details"]["salvaged_messages"], 4, "{report}");
    assert!(
        report["messages_recovered"].as_u64().unwrap() > 1_230,
        "{report}"
    );

    // Without an index, `info` scans the bag: through a window too, not holding the object.
    let url = nginx.url("large.bag");
    let Some((code, peak)) = robolog_peak_memory(["info", &url]) else {
        return;
    };
    assert_eq!(code, 1, "the damage is said in the exit status");
    assert!(
        peak.saturating_sub(baseline) < 48 << 20,
        "info: peak resident memory {peak} (recovering a small object: {baseline})"
    );
    let remote = robolog(["info", "--json", &url]);
    let file = robolog(["info", "--json", local.to_str().unwrap()]);
    assert_eq!(nameless(&remote.stdout), nameless(&file.stdout));
    assert!(
        remote.stdout.contains("read by a linear scan"),
        "{}",
        remote.stdout
    );
}

#[test]
fn check_convert_and_du_of_a_large_url_hold_a_window_of_it_not_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("large.mcap");
    large_recording(&local);
    let size = std::fs::metadata(&local).unwrap().len();
    assert!(size > 75 << 20, "{size}");
    std::fs::write(
        nginx.root().join("small.mcap"),
        robolog_testkit::testdata::read("samples/demo-zstd.mcap"),
    )
    .unwrap();
    let (url, small_url) = (nginx.url("large.mcap"), nginx.url("small.mcap"));
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let local = local.to_str().unwrap();

    for (what, small_args, args) in [
        (
            "check",
            vec!["check".to_owned(), small_url.clone()],
            vec!["check".to_owned(), url.clone()],
        ),
        (
            "convert",
            vec!["convert".to_owned(), small_url.clone(), out("small.mcap")],
            vec!["convert".to_owned(), url.clone(), out("url.mcap")],
        ),
        (
            "du",
            vec!["du".to_owned(), small_url.clone()],
            vec!["du".to_owned(), url.clone()],
        ),
    ] {
        // What the command costs on any URL: the program, its runtime, its buffers.
        let Some((_, baseline)) = robolog_peak_memory(&small_args) else {
            return;
        };
        nginx.clear();
        let Some((code, peak)) = robolog_peak_memory(&args) else {
            return;
        };
        let (count, fetched) = totals(&nginx.requests());
        eprintln!(
            "{what} of a {size}-byte URL: peak resident memory {peak} bytes ({baseline} for a small one), {count} requests, {fetched} bytes fetched"
        );
        assert_eq!(code, 0, "{what}");
        // Every byte once (and the tail the opening read), never the object whole in memory.
        assert!(
            fetched >= size && fetched < size + size / 20,
            "{what}: {fetched} of {size}"
        );
        assert!(
            peak.saturating_sub(baseline) < 48 << 20,
            "{what}: peak resident memory {peak} (of a small object: {baseline}) for a {size}-byte object"
        );
    }
    // What was read is what the file gives.
    assert_eq!(
        nameless(&stdout(&["check", "--json", url.as_str()])),
        nameless(&stdout(&["check", "--json", local]))
    );
    assert_eq!(
        nameless(&stdout(&["du", "--json", url.as_str()])),
        nameless(&stdout(&["du", "--json", local]))
    );
    robolog(["convert", local, out("file.mcap").as_str()]).expect(0);
    assert!(std::fs::read(out("url.mcap")).unwrap() == std::fs::read(out("file.mcap")).unwrap());
}

/// On a terminal, work that streams a URL in shows a bar of the bytes fetched so far. The command
/// runs on a pseudo-terminal (`script`, from util-linux) and reads from a server that sends
/// 2 MB/s per connection, so that the bar is drawn while the bytes arrive.
#[test]
fn check_of_a_url_on_a_terminal_shows_the_bytes_fetched() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("slow/drive.mcap");
    recording(&local);
    let size = std::fs::metadata(&local).unwrap().len();
    let command = format!(
        "'{}' check '{}'",
        env!("CARGO_BIN_EXE_robolog"),
        nginx.url("slow/drive.mcap")
    );
    let output = match Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
    {
        Ok(output) => output,
        Err(e) if std::env::var("ROBOLOG_INTEROP").as_deref() != Ok("required") => {
            eprintln!("skipping test: cannot run script (util-linux): {e}");
            return;
        }
        Err(e) => panic!("ROBOLOG_INTEROP=required but script (util-linux) does not run: {e}"),
    };
    let transcript = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{transcript}");
    // Frames such as `checking [=====>    ] 6.50 MiB/19.31 MiB fetched (2.01 MiB/s), 3s (eta 6s)`,
    // one at least with bytes already fetched.
    let total = format!("/{:.2} MiB fetched (", size as f64 / f64::from(1 << 20));
    let frames: Vec<&str> = transcript
        .split(['\r', '\n'])
        .filter(|line| line.contains("checking [") && line.contains(&total))
        .collect();
    eprintln!("{} frames of the bar: {:?}", frames.len(), frames.last());
    assert!(
        frames.iter().any(|frame| !frame.contains("] 0 B/")),
        "no frame of the bar with bytes fetched:\n{transcript}"
    );
    assert!(
        transcript.contains(" messages read, ") && transcript.contains(": ok"),
        "{transcript}"
    );
}

/// About 80 MB of incompressible messages of 64 KiB in a bag 1.2, which has no chunks: its
/// per-topic index lists every message where it lies in the file.
fn large_bag_1_2(path: &Path) {
    let mut writer = robolog::rosbag::V12Writer::new(std::fs::File::create(path).unwrap()).unwrap();
    let topic = writer
        .add_topic(
            "/lidar",
            "std_msgs/UInt8MultiArray",
            "82373f1612381bb6ee473b5cd6f5d89c",
            "",
        )
        .unwrap();
    for (i, payload) in (0..1_250u64).zip(random_payloads()) {
        writer
            .write(topic, 1_700_000_000_000_000_000 + i * 100_000_000, &payload)
            .unwrap();
    }
    writer.finish().unwrap();
}

/// `check` of a bag 1.2, whose index is checked against every record it points at: from a URL,
/// the object streams in once and is never held whole, and the report is the local file's,
/// with its index whole or damaged (then the bag is read by a linear scan, streamed too).
#[test]
#[allow(clippy::print_stderr)] // the figures measured, for the test's log
fn check_of_a_large_bag_1_2_url_holds_a_window_of_it_not_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let local = nginx.root().join("large.bag");
    large_bag_1_2(&local);
    let size = std::fs::metadata(&local).unwrap().len();
    assert!(size > 75 << 20, "{size}");
    // The last index entry points into the middle of a message.
    let mut damaged = std::fs::read(&local).unwrap();
    let last_entry = damaged.len() - 8;
    let pointed = u64::from_le_bytes(damaged[last_entry..].try_into().unwrap());
    damaged[last_entry..].copy_from_slice(&(pointed + 1_000).to_le_bytes());
    std::fs::write(nginx.root().join("damaged.bag"), &damaged).unwrap();
    std::fs::write(
        nginx.root().join("small.bag"),
        robolog_testkit::testdata::read("bags/generated/ros_comm/v12_indexed.bag"),
    )
    .unwrap();
    let Some((_, baseline)) = robolog_peak_memory(["check", &nginx.url("small.bag")]) else {
        return;
    };
    for (name, code) in [("large.bag", 0), ("damaged.bag", 1)] {
        let url = nginx.url(name);
        nginx.clear();
        let Some((status, peak)) = robolog_peak_memory(["check", &url]) else {
            return;
        };
        let (count, fetched) = totals(&nginx.requests());
        eprintln!(
            "check of the {size}-byte bag 1.2 {name}: peak resident memory {peak} bytes ({baseline} for a small one), {count} requests, {fetched} bytes fetched"
        );
        assert_eq!(status, code, "{name}");
        let once = if code == 0 { 1 } else { 2 };
        assert!(
            fetched >= size && fetched < once * size + size / 20,
            "{name}: {fetched} of {size}"
        );
        assert!(
            peak.saturating_sub(baseline) < 48 << 20,
            "{name}: peak resident memory {peak} (of a small object: {baseline}) for a {size}-byte object"
        );
        let path = nginx.root().join(name);
        let local = robolog(["check", "--json", path.to_str().unwrap()]);
        let remote = robolog(["check", "--json", url.as_str()]);
        assert_eq!(nameless(&remote.stdout), nameless(&local.stdout), "{name}");
        let report = nameless(&local.stdout);
        assert_eq!(report["messages"], 1_250, "{report}");
        assert_eq!(report["valid"], code == 0, "{report}");
    }
}

/// A bag 1.2 and an MCAP file in the draft layout, whose readers index them by a pass over the
/// whole file: a URL of one streams in for the commands that read it once (`convert`, `cat`,
/// `info`), rather than being fetched into memory whole, and gives what the local file gives.
#[test]
fn a_bag_1_2_and_a_draft_mcap_file_stream_in_from_a_url() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let files = [
        (
            "v12.bag",
            robolog_testkit::testdata::read("bags/generated/ros_comm/v12_indexed.bag"),
            "1.2",
        ),
        ("draft.mcap", robolog_testkit::draft_mcap::minimal(), "0"),
    ];
    for (name, data, version) in files {
        let local = nginx.root().join(name);
        std::fs::write(&local, &data).unwrap();
        let local = local.to_str().unwrap().to_owned();
        let url = nginx.url(name);
        let out = |from: &str| dir.path().join(format!("{from}-{name}.mcap"));
        robolog(["convert", url.as_str(), out("url").to_str().unwrap()]).expect(0);
        robolog(["convert", local.as_str(), out("file").to_str().unwrap()]).expect(0);
        // The same messages, in the same order, on the same channels (read as a stream, the
        // channel records are written where their first message is, not all first).
        for what in [&["cat", "--json"][..], &["list", "channels"][..]] {
            let listed = |from: &str| {
                let mut args = what.to_vec();
                let path = out(from);
                args.push(path.to_str().unwrap());
                stdout(&args)
            };
            assert_eq!(listed("url"), listed("file"), "{name}: convert, {what:?}");
        }
        // (The plain lines' columns are as wide as the channels known so far: a stream knows
        // fewer at its start.)
        assert!(
            stdout(&["cat", "--json", url.as_str()]) == stdout(&["cat", "--json", local.as_str()]),
            "{name}: cat"
        );
        let info: serde_json::Value =
            serde_json::from_str(&stdout(&["info", "--json", url.as_str()])).unwrap();
        let file: serde_json::Value =
            serde_json::from_str(&stdout(&["info", "--json", local.as_str()])).unwrap();
        assert_eq!(info["message_count"], file["message_count"], "{name}");
        assert!(info["message_count"].as_u64().unwrap() > 0, "{name}");
        assert_eq!(
            info["index"]["reason"], "read from a stream",
            "{name}: {info}"
        );
        assert_eq!(file["version"], version, "{name}");
        assert_eq!(info["version"], version, "{name}");
    }
}
