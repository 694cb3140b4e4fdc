#!/usr/bin/env bash
# Long local run of one target: bash fuzz/run-long.sh <target> <runs> <max_len>
# Logs to fuzz/logs/<target>.log (git-ignored); crashes go to fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
target=$1 runs=${2:-10000000} max_len=${3:-65536}
mkdir -p logs
exec nice -n 10 cargo +nightly fuzz run -s none "$target" -- \
    -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 >"logs/$target.log" 2>&1
