#!/usr/bin/env bash
# Creates target/python-venv for the Python package's tests: the pinned reference tools
# (scripts/interop-requirements.txt), maturin and pytest (crates/robolog-python/tests/
# requirements.txt), then builds the package into it (`maturin develop`, a debug build sharing
# the workspace's target/). The venv is rebuilt only when the requirements change; the package
# is rebuilt every time (cargo only recompiles what changed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/python-venv"
requirements="$root/crates/robolog-python/tests/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(cat "$requirements" "$root/scripts/interop-requirements.txt" | sha256sum | cut -d' ' -f1)"
if ! [ -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    echo "$want" > "$stamp"
fi
cd "$root/crates/robolog-python"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --quiet
echo "python venv ready: $venv"
