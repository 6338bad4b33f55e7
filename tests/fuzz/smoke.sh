#!/usr/bin/env bash
# The smoke run of one harness (ctest -L fuzz, scripts/test --fuzz-smoke): every seed
# once, as a regression test of the harness and of the crashes fixed so far, then a few
# seconds of fuzzing so a harness that no longer finds anything new, or crashes at
# once, is noticed. New inputs and any crash go under WORK, never into the repository.
#   smoke.sh FUZZER SEEDS DICT WORK SECONDS     (DICT may be "")
set -euo pipefail
bin=$1 seeds=$2 dict=$3 work=$4 seconds=${5:-5}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
args=(-rss_limit_mb=2048 -timeout=20 -artifact_prefix="$work/artifacts/")
[ -n "$dict" ] && args+=(-dict="$dict")
echo "== $(basename "$bin"): $(find "$seeds" -type f | wc -l) seeds"
"$bin" "${args[@]}" -runs=0 "$seeds"
echo "== $(basename "$bin"): ${seconds}s of fuzzing"
"$bin" "${args[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" "$seeds"
