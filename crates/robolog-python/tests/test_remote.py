"""URLs wherever a path is taken: logs served by a real nginx on the loopback read by ranged
requests, equal to the local files (summary, messages, decoded values, to_arrow), and the
functions that take paths (check, convert, export, recover) given URLs."""

import shutil

import pyarrow.parquet
import pytest

import robolog
from conftest import TESTDATA

FILES = {
    "ref_lz4.bag": TESTDATA / "bags/generated/ros_comm/ref_lz4.bag",
    # A bag 1.2: opened by streaming it in once, its queries by the span of their messages.
    "v12_indexed.bag": TESTDATA / "bags/generated/ros_comm/v12_indexed.bag",
    "demo-zstd.mcap": TESTDATA / "samples/demo-zstd.mcap",
    "sample.bddf": TESTDATA / "bddf/sample.bddf",
}


@pytest.fixture(scope="module")
def served(nginx):
    for name, path in FILES.items():
        shutil.copyfile(path, nginx.root / name)
    return nginx


def without_file(summary):
    """The summary without the fields naming the input (its path or URL)."""
    return {k: v for k, v in summary.items() if k != "file"}


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_url_reads_as_the_local_file(served, name):
    url = served.url(name)
    with robolog.open(FILES[name]) as local, robolog.open(url) as remote:
        assert remote.format == local.format
        assert without_file(remote.summary()) == without_file(local.summary())
        assert remote.summary()["file"] == url
        # The URL as given (a pathlib.Path would fold its "//"); a local path as text too.
        assert remote.path == url and type(remote.path) is str
        assert local.path == str(FILES[name]) and type(local.path) is str
        assert remote.message_count == local.message_count > 0
        counts = {c["topic"]: c["message_count"] for c in local.summary()["channels"]}
        topic = max(counts, key=counts.get)
        theirs = [(m.log_time, m.publish_time, bytes(m.data)) for m in remote.messages(topics=topic)]
        ours = [(m.log_time, m.publish_time, bytes(m.data)) for m in local.messages(topics=topic)]
        assert theirs == ours and ours
        if local.format != "bddf":
            assert [m.decode() for m in remote.messages(topics=topic)] == [
                m.decode() for m in local.messages(topics=topic)
            ]
        assert remote.to_arrow(topic, raw_undecodable=True).equals(
            local.to_arrow(topic, raw_undecodable=True)
        )


def test_a_url_is_read_by_ranged_requests(served):
    start = len(served.requests())
    with robolog.open(served.url("demo-zstd.mcap")) as log:
        # One topic of a log with a chunk index: what its chunks need, not the whole file.
        assert sum(1 for _ in log.messages(topics="/chatter")) > 0
    requests = served.requests()[start:]
    assert requests
    assert all(r[1] == "/demo-zstd.mcap" for r in requests)
    ranged = [r for r in requests if r[0] == "GET"]
    assert ranged and all(r[2] == 206 and r[4].startswith("bytes=") for r in ranged), ranged


def test_the_functions_taking_paths_take_urls(served, tmp_path):
    url = served.url("ref_lz4.bag")
    local = FILES["ref_lz4.bag"]
    checked, expected = robolog.check(url), robolog.check(local)
    assert checked.valid and checked.format == "bag"
    assert checked.messages == expected.messages == 150
    assert (checked.path, expected.path) == (url, str(local))
    report = robolog.convert(url, tmp_path / "out.mcap", topics="/imu")
    assert report.messages == 50 and report.output == str(tmp_path / "out.mcap")
    with robolog.open(tmp_path / "out.mcap") as out, robolog.open(local) as log:
        assert [bytes(m.data) for m in out] == [bytes(m.data) for m in log.messages(topics="/imu")]
    exported = robolog.export(url, tmp_path / "export", topics="/imu")
    with robolog.open(local) as log:
        assert pyarrow.parquet.read_table(exported.files[0].path).equals(log.to_arrow("/imu"))
    recovered = robolog.recover(url, tmp_path / "recovered.bag")
    assert recovered.messages_recovered == 150 and recovered.lossless
    assert recovered.output == str(tmp_path / "recovered.bag")


def test_a_missing_url_is_an_error(served):
    with pytest.raises(OSError, match="404|not found|Not Found"):
        robolog.open(served.url("nothing.mcap"))
