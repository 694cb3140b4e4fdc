"""Shared helpers of the robolog Python tests: where the repository's test data is, and the
files of each format."""

import pathlib

import pytest

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


def short(path: pathlib.Path) -> str:
    return str(path.relative_to(TESTDATA))


@pytest.fixture
def at_repo(monkeypatch):
    """Runs the test from the repository root, as the CLI's golden files were made."""
    monkeypatch.chdir(REPO)
    return REPO
