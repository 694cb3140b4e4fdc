#!/usr/bin/env bash
# Creates target/interop-venv with the pinned reference tools (rosbags, mcap, mcap-ros1-support,
# pyarrow, duckdb).
# Re-running it is cheap: the venv is rebuilt only when the requirements change.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/interop-venv"
requirements="$root/scripts/interop-requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
echo "$want" > "$stamp"
echo "interop venv ready: $venv"
