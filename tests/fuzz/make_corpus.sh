#!/usr/bin/env bash
# Rewrites the seed corpora (tests/fuzz/corpus/<name>/): the files make_corpus.py
# writes, then the seeds only a harness can make with the code under test (real
# manifests, layers, checkpoints, keys, signed payloads: IMGTOOL_FUZZ_WRITE_SEEDS).
# Needs the fuzz build (bench/fuzz or scripts/test --fuzz-smoke makes it).
#   tests/fuzz/make_corpus.sh [BUILD_DIR]     default build-fuzz
# Inputs added by `bench/fuzz --merge` are kept; only the seeds named here are rewritten.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${1:-build-fuzz}
CORPUS=tests/fuzz/corpus
python3 tests/fuzz/make_corpus.py "$CORPUS"
while read -r name _; do
  mkdir -p "$CORPUS/$name"
  IMGTOOL_FUZZ_WRITE_SEEDS="$CORPUS/$name" "$BUILD_DIR/tests/fuzz/fuzz_$name" -runs=0 >/dev/null 2>&1 || true
  # A harness without seeds of its own exits by running an empty input: nothing written.
done <"$BUILD_DIR/tests/fuzz/targets.txt"
# The manifest parsers start from the real manifests the node harness made.
cp "$CORPUS"/oci_node/*.json "$CORPUS/manifest/"
for d in "$CORPUS"/*/; do
  echo "$(basename "$d"): $(find "$d" -type f | wc -l) files"
done
du -sh "$CORPUS"
