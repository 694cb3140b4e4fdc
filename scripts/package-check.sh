#!/usr/bin/env bash
# Every file a publishable crate's library pulls in at compile time (`include_str!`,
# `include_bytes!`, `#[path = ...]` in src/ and build.rs) is inside that crate's package.
#
# This stands in for the verification build of `cargo publish --dry-run`, which rebuilds every
# crate and its dependencies once more from the unpacked packages (the longest CI step). What that
# build catches beyond the per-crate `cargo check` runs is a source file reaching outside its
# package; this finds exactly that, from `cargo package --list`, in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for manifest in crates/*/Cargo.toml; do
    dir=$(dirname "$manifest")
    grep -q '^publish = false' "$manifest" && continue
    crate=$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -n 1)
    listed=$(cargo package --quiet --allow-dirty --list -p "$crate")
    sources=$(find "$dir/src" -name '*.rs'; [ -f "$dir/build.rs" ] && echo "$dir/build.rs" || true)
    for source in $sources; do
        # The paths named by the three forms, one per line, relative to the source file's folder
        # (`#[path]` of a module file in src/ resolves there too).
        targets=$(grep -oE '(include_str!|include_bytes!)\("[^"]+"\)|#\[path = "[^"]+"\]' "$source" |
            sed -E 's/.*"([^"]+)".*/\1/' || true)
        for target in $targets; do
            resolved=$(realpath -m --relative-to="$dir" "$(dirname "$source")/$target")
            if ! grep -qxF "$resolved" <<<"$listed"; then
                echo "$source: $target ($crate/$resolved) is not in the package of $crate"
                status=1
            fi
        done
    done
done
exit "$status"
