"""Shared helpers of the robolog Python tests: where the repository's test data is, and the
files of each format."""

import pathlib

import pytest
import yaml
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import Reader as Ros2Reader
from rosbags.typesys import Stores, get_typestore

REPO = pathlib.Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"

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
