"""The examples of the documentation run: the crate's lib.rs example, the package README's and
the Python guide in the repository's README.md (run from the repository root, as written)."""

import re

import pytest

from conftest import REPO


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def rust_doc_blocks(path):
    doc = "\n".join(
        line[4:] if line.startswith("//! ") else line[3:]
        for line in path.read_text().splitlines()
        if line.startswith("//!")
    )
    return python_blocks(doc)


def guide_blocks():
    text = (REPO / "README.md").read_text()
    guide = text.split("\n## Python", 1)[1].split("\n## ", 1)[0] if "\n## Python" in text else ""
    return python_blocks(guide)


EXAMPLES = (
    [("lib.rs", b) for b in rust_doc_blocks(REPO / "crates/robolog-python/src/lib.rs")]
    + [("package README", b) for b in python_blocks((REPO / "crates/robolog-python/README.md").read_text())]
    + [("README guide", b) for b in guide_blocks()]
)


def test_there_are_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("where, code", EXAMPLES, ids=[f"{w}-{i}" for i, (w, _) in enumerate(EXAMPLES)])
def test_example_runs(at_repo, where, code):
    # The guide's examples with optional libraries run where they are installed: the CI venv
    # has them all (tests/requirements.txt).
    for module in ("pandas", "polars", "daft", "ray", "duckdb"):
        if f"import {module}" in code:
            pytest.importorskip(module)
    exec(compile(code, where, "exec"), {"__name__": "__example__"})
