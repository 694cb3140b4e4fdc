#!/usr/bin/env bash
# The fuzz step of .ci/run: build the seed corpora, then run every target briefly.
#
# Needs the nightly toolchain, and installs cargo-fuzz when it is missing. Without either it says
# so and succeeds, since the property tests that stand in for the fuzz targets
# (robustness.rs, properties.rs, corruption.rs in each format crate's tests/) already ran in the
# test suite.
#
# A fixed -seed keeps CI runs repeatable. FUZZ_SECONDS (default 10) is the time per target: 11 targets, about 2 minutes of fuzzing plus the build.
set -euo pipefail
cd "$(dirname "$0")"

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: skipped (no nightly toolchain); the property tests ran instead"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    # A new machine has the toolchains but not cargo-fuzz: about two minutes to build it.
    CARGO_FUZZ_VERSION=${CARGO_FUZZ_VERSION:-0.13.2}
    echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
    if ! cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" >/dev/null 2>&1; then
        echo "fuzz: skipped (cargo-fuzz could not be installed); the property tests ran instead"
        exit 0
    fi
fi

seconds=${FUZZ_SECONDS:-10}
# Unoptimised builds (`--dev`): for seconds of fuzzing per target, a release build's single
# codegen unit costs far more time to compile than it gains in executions; debug assertions and
# overflow checks come with them.
cargo +nightly run --quiet -p robolog-fuzz-seeds
cargo +nightly fuzz build --dev -s none
for target in $(cargo +nightly fuzz list); do
    echo "fuzz: $target for ${seconds}s"
    # Run over a copy of the seeds so that CI never grows the local corpus.
    work=$(mktemp -d)
    cp -r "corpus/$target/." "$work/" 2>/dev/null || true
    if ! cargo +nightly fuzz run --dev -s none "$target" "$work" -- \
        -max_total_time="$seconds" -seed=1 -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$work.log" 2>&1; then
        tail -n 40 "$work.log"
        echo "fuzz: $target failed; the input is in fuzz/artifacts/$target/"
        exit 1
    fi
    grep -E "stat::number_of_executed_units" "$work.log" || true
    rm -rf "$work" "$work.log"
done
echo "fuzz: every target ran without a crash"
