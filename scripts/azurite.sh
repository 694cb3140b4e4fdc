#!/usr/bin/env bash
# Installs Azurite (the Azure Storage emulator, from npm) into target/azurite for the az:// tests
# (robolog-testkit azure). Re-running it is cheap: nothing is done when that version is there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=3.37.0
dir="$root/target/azurite"
if [ -x "$dir/node_modules/.bin/azurite-blob" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
npm install --no-audit --no-fund --silent --no-save "azurite@$version"
echo "$version" > "$dir/.version"
echo "azurite ready: $dir"
