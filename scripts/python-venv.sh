#!/usr/bin/env bash
# Creates target/python-venv for the Python package's tests: the pinned reference tools
# (scripts/interop-requirements.txt), maturin and pytest (crates/robolog-python/tests/
# requirements.txt), then builds the package into it as `maturin develop` would: a debug build of
# the extension module beside python/robolog, and a .pth file naming that folder. The venv is
# rebuilt only when the requirements change; the package is rebuilt every time (cargo only
# recompiles what changed).
#
# The module is built by cargo with the whole workspace selected (`--workspace --lib --tests`, the
# feature set `cargo xtask test` builds with), so that it reuses that build's dependencies:
# `maturin develop` builds the one package, whose dependencies then resolve to other features
# and compile all over again. maturin still checks the packaging (an sdist, which compiles
# nothing); `pip install crates/robolog-python` builds the release wheel users get.
#
# `--venv-only` creates the venv and stops (CI downloads it while cargo builds).
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
if [ "${1:-}" = "--venv-only" ]; then
    echo "python venv created: $venv"
    exit 0
fi
cd "$root"
cargo build --quiet --workspace --lib --tests
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$(uname -s)" in
    Darwin) built="$target_dir/debug/librobolog_python.dylib" ;;
    *) built="$target_dir/debug/librobolog_python.so" ;;
esac
# Copied, not linked: a later build must not change the module under a running interpreter.
cp "$built" "$root/crates/robolog-python/python/robolog/_robolog.abi3.so"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$root/crates/robolog-python/python" > "$site/robolog.pth"
"$venv/bin/maturin" sdist --manifest-path "$root/crates/robolog-python/Cargo.toml" \
    --out "$target_dir/python-sdist"
echo "python venv ready: $venv"
