#!/usr/bin/env bash
# The tfrecord-rs candidate for the peer harness (peers/run_peers.sh, step `cand`):
#
#   CANDIDATES_DIR=/path/to/tfrecord-rs/bench/candidates /path/to/peers/run_peers.sh
#
# (bench/run.sh does that and writes BENCHMARKS.md.) Builds the `tfrecord-bench` binary of
# this repository in release mode and runs it on the harness's workloads; it prints RESULT
# lines with "peer": "tfrecord-rs" (see peers/PROTOCOL.md), then RSS lines (peak resident set
# of each streaming op in a fresh process), which the harness ignores and bench/report.py reads.
#
# Env (run_peers.sh exports the first four):
#   DATA_DIR (/tmp/peers/data)  OUT_DIR (/tmp/peers/out)  REPS (5)
#   CARGO_TARGET_DIR  where cargo builds (default: the repository's target/)
#   TFRECORD_RS_REPO  the repository to build; default: the folder above this script's real
#                     path (symlinks resolved). Set it when the script is copied elsewhere.
#   TFRECORD_RS_PEAK_RSS=0  skip the peak-RSS pass
set -euo pipefail
SELF="$(readlink -f "${BASH_SOURCE[0]}")"
REPO="${TFRECORD_RS_REPO:-$(cd "$(dirname "$SELF")/../.." && pwd)}"
if [ ! -f "$REPO/bench/Cargo.toml" ] || [ ! -f "$REPO/Cargo.toml" ]; then
  echo "tfrecord-rs candidate: $REPO is not the tfrecord-rs repository; set TFRECORD_RS_REPO" >&2
  exit 1
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
echo "tfrecord-rs candidate: building $REPO (tfrecord-bench, release) into $CARGO_TARGET_DIR" >&2
(cd "$REPO" && cargo build --release --locked --quiet -p tfrecord-bench)
BIN="$CARGO_TARGET_DIR/release/tfrecord-bench"
ARGS=(--data "${DATA_DIR:-/tmp/peers/data}" --out "${OUT_DIR:-/tmp/peers/out}")
"$BIN" "${ARGS[@]}" --reps "${REPS:-5}"
if [ "${TFRECORD_RS_PEAK_RSS:-1}" != 0 ]; then
  "$BIN" "${ARGS[@]}" --peak-rss
fi
