"""Shared helpers of the robolog Python tests: where the repository's test data is, the files
of each format, a generated large log, and an nginx on the loopback for URLs."""

import os
import pathlib
import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest
import yaml
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import Reader as Ros2Reader
from rosbags.typesys import Stores, get_typestore

import robolog

REPO = pathlib.Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"
# The nginx configuration the Rust remote tests use (robolog-testkit), with @DIR@ and @PORT@.
NGINX_CONF = REPO / "crates" / "robolog-testkit" / "src" / "nginx.conf"

# Bags that rosbags cannot read (cut, unindexed, 1.2, empty): robolog reads them, and the
# comparisons take the reindexed 2.0 copy where there is one.
ROSBAGS_UNREADABLE = {
    "empty-file.bag",
    "dummy.bag",
    "v20_killed.bag",
    "v20_unindexed.bag",
}


def bags():
    """Every ROS 1 bag in testdata/bags."""
    return sorted(TESTDATA.glob("bags/**/*.bag"))


def rosbags_reference(bag: pathlib.Path):
    """The bag rosbags reads for `bag`: itself, or for 1.2 bags (which rosbags does not read)
    the same messages reindexed into 2.0; None for the ones it cannot read at all."""
    name = bag.name
    if name in ROSBAGS_UNREADABLE:
        return None
    if name.startswith("v12_") and name != "v12_noheader_reindexed.bag":
        return TESTDATA / "bags/generated/ros_comm/v12_noheader_reindexed.bag"
    return bag


def mcap_files():
    """Every MCAP file in testdata (samples and the conformance files)."""
    return sorted(TESTDATA.glob("samples/*.mcap")) + sorted(
        TESTDATA.glob("mcap-conformance/**/*.mcap")
    )


def bddf_files():
    return sorted(TESTDATA.glob("bddf/*.bddf"))


def rosbag2_bags():
    """The ROS 2 recordings: bag directories and lone storage files."""
    root = TESTDATA / "rosbag2"
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and p.name != "files")
    return dirs + sorted((root / "files").iterdir())


def ros2_storage_files(bag: pathlib.Path):
    """The storage files of a ROS 2 bag (a directory's, from its metadata.yaml), or the file."""
    if not bag.is_dir():
        return [bag]
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    return [bag / pathlib.Path(p).name for p in meta["relative_file_paths"]]


def rosbags_ros2(bag: pathlib.Path, deserialize=None):
    """Every message rosbags reads from a ROS 2 bag: (topic, time, bytes, type, value), where
    value is `deserialize(message, typestore)` of rosbags' deserialized message (None when rosbags
    cannot deserialize it, or without `deserialize`). Each storage file is read alone, as
    robolog-rosbag2's interop test does: rosbags' directory reader matches a file's topics to
    metadata.yaml's by their QoS text, which some upstream bags do not repeat exactly; files
    AnyReader refuses (schemas it cannot parse) are read raw."""
    out = []
    for file in ros2_storage_files(bag):
        try:
            with AnyReader([file], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
                for c, t, raw in reader.messages():
                    value = None
                    if deserialize is not None:
                        try:
                            value = deserialize(reader.deserialize(raw, c.msgtype), reader.typestore)
                        except Exception:  # noqa: BLE001 - a type rosbags cannot read
                            value = None
                    out.append((c.topic, t, bytes(raw), c.msgtype, value))
        except AnyReaderError:
            with Ros2Reader(file) as reader:
                for c, t, raw in reader.messages():
                    out.append((c.topic, t, bytes(raw), c.msgtype, None))
    return out


def short(path: pathlib.Path) -> str:
    return str(path.relative_to(TESTDATA))


@pytest.fixture
def at_repo(monkeypatch):
    """Runs the test from the repository root, as the CLI's golden files were made."""
    monkeypatch.chdir(REPO)
    return REPO


def big_mcap(path, count, chunk_size=None):
    """An MCAP file of `count` small ros1 messages (`uint64 n`, n = 0, 1, ...) on `/n`, written by
    robolog.Writer in zstd chunks."""
    with robolog.Writer(path, compression="zstd", chunk_size=chunk_size) as writer:
        channel = writer.add_channel(
            "/n", "ros1", schema_name="p/N", schema_encoding="ros1msg", schema_data=b"uint64 n\n"
        )
        for i in range(count):
            writer.write(channel, 1_000_000 + i, struct.pack("<Q", i))
    return path


class Nginx:
    """A real nginx on a free loopback port serving `root`, configured as robolog-testkit's (the
    Rust remote tests'): the requests it served are read back from its access log."""

    def __init__(self, dir: pathlib.Path, binary: str):
        self.root = dir / "www"
        self.root.mkdir(parents=True)
        (dir / "temp").mkdir()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.access_log = dir / "access.log"
        conf = dir / "nginx.conf"
        conf.write_text(
            NGINX_CONF.read_text().replace("@DIR@", str(dir)).replace("@PORT@", str(self.port))
        )
        self.process = subprocess.Popen(
            [binary, "-p", str(dir), "-c", str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    error = (dir / "error.log").read_text() if (dir / "error.log").exists() else ""
                    raise RuntimeError(f"nginx did not listen on port {self.port}: {error}")
                time.sleep(0.02)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def requests(self):
        """(method, path, status, bytes sent, Range header or "-") of each request served, once
        nginx has logged them: it writes a line after sending the response, so a count read at
        once may miss the last (robolog-testkit's server_log waits the same way)."""
        out = []
        for line in self._settled_log().splitlines():
            method, path, status, sent, byte_range = line.split(" ", 4)
            out.append((method, path, int(status), int(sent), byte_range.strip('"')))
        return out

    def _settled_log(self) -> str:
        """The access log once it has not changed for 150 ms (5 s at most)."""
        read = lambda: self.access_log.read_text() if self.access_log.exists() else ""  # noqa: E731
        deadline = time.monotonic() + 5
        log, since = read(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.03)
            now = read()
            if now != log:
                log, since = now, time.monotonic()
            elif time.monotonic() - since >= 0.15:
                break
        return log

    def stop(self):
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="session")
def nginx(tmp_path_factory):
    """An nginx serving a temporary folder (`nginx.root`); the tests skip without nginx, unless
    ROBOLOG_INTEROP=required (as .ci/run sets, after installing it)."""
    binary = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.isfile(p)), None
    )
    if binary is None:
        if os.environ.get("ROBOLOG_INTEROP") == "required":
            pytest.fail("ROBOLOG_INTEROP=required but nginx is not installed (apt-get install nginx)")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    server = Nginx(tmp_path_factory.mktemp("nginx"), binary)
    yield server
    server.stop()


def largest_gap_while(work):
    """Runs `work` in a thread and returns (largest pause of this thread's loop, duration of
    the work): a thread holding the GIL for the whole work stops this loop for as long."""
    done = threading.Event()
    elapsed = []

    def run():
        t0 = time.perf_counter()
        work()
        elapsed.append(time.perf_counter() - t0)
        done.set()

    worker = threading.Thread(target=run)
    last, gap = time.perf_counter(), 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
        time.sleep(0.001)
    worker.join()
    return gap, elapsed[0]
