#!/usr/bin/env bash
# Runs the peer harness (shared/peers/run_peers.sh: TensorFlow, the `tfrecord` crate,
# py-tfrecord, physical-limit baselines) with this repository as a candidate, in one run, and
# writes BENCHMARKS.md at the repository root from that run's logs.
#
#   bench/run.sh                      # everything, REPS=5 ROUNDS=1
#   REPS=3 bench/run.sh               # fewer repetitions per measurement
#   bench/run.sh tf_st rust cand      # only some harness steps (the table then lacks the rest)
#   bench/run.sh --report-only bench/results   # rewrite BENCHMARKS.md from the kept logs
#   bench/run.sh --arrow-only         # only the columns/Arrow rows (beside tfx_bsl and TF's
#                                     # read_parse), into bench/results/, then rewrite the page
#
# The raw logs of the run (RESULT lines of every peer, machine.txt, load samples) are copied
# to bench/results/, replacing the previous run's.
#
# Env:
#   PEERS_DIR   the harness (default: ../shared/peers beside the repository)
#   VENV        the harness's Python venv with tensorflow-cpu 2.21.0, tfrecord, fastavro
#               (default /tmp/peers/tfenv). When it lacks them and the repository's
#               .venv-interop (made by interop/run.sh) has TensorFlow, a venv that reuses that
#               TensorFlow is made at $VENV and only `tfrecord` and `fastavro` are installed
#               into it; otherwise run_peers.sh makes a full venv itself (pip install).
#   LOG_DIR     where the RESULT logs go (default /tmp/peers/logs/tfrecord-rs-<stamp>)
#   DATA_DIR, OUT_DIR, REPS, ROUNDS, CARGO_TARGET_DIR: passed to run_peers.sh (see there).
#   BENCHMARKS  the file to write (default BENCHMARKS.md at the repository root)
set -euo pipefail
HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
OUT_MD="${BENCHMARKS:-$REPO/BENCHMARKS.md}"
log() { echo "[bench/run.sh] $*" >&2; }

report() {
  local dir="$1" cmd="$2"
  python3 "$HERE/report.py" --logs "$dir" --command "$cmd" --out "$OUT_MD"
  log "wrote $OUT_MD"
}

# The columns and Arrow rows: tfrecord-bench's columnar, owned and Arrow reads, TensorFlow's
# read_parse on one thread, and tfx_bsl's decoders (bench/tfx_bsl/, its own virtualenv), in one
# session, into the directory $1.
arrow_step() {
  local dir="$1" py
  log "arrow: tfrecord-bench --ops read_parse,to_arrow,to_arrow_mem,to_parquet; TensorFlow read_parse; tfx_bsl"
  (cd "$REPO" && cargo build --release --locked --quiet -p tfrecord-bench) || return 1
  "${CARGO_TARGET_DIR:-$REPO/target}/release/tfrecord-bench" --data "${DATA_DIR:-/tmp/peers/data}" \
    --out "${OUT_DIR:-/tmp/peers/out}" --reps "${REPS:-5}" --workloads mnist,ctr,seq \
    --ops read_parse,to_arrow,to_arrow_mem,to_parquet --variants st,owned,owned_batch,columns \
    > "$dir/arrow.results" || return 1
  py="${VENV:-/tmp/peers/tfenv}/bin/python"
  [ -x "$py" ] || py="$REPO/.venv-interop/bin/python"
  DATA_DIR="${DATA_DIR:-/tmp/peers/data}" "$py" "$PEERS_DIR/bench_tf.py" --mode st --ops read_parse \
    --workloads mnist,ctr,seq --reps "${REPS:-5}" > "$dir/tf_read_parse.log" || return 1
  REPS="${REPS:-5}" bash "$HERE/tfx_bsl/run.sh" --workloads mnist,ctr,seq --ops to_arrow,to_arrow_mem \
    > "$dir/tfx_bsl.log" || return 1
}

if [ "${1:-}" = "--report-only" ]; then
  [ -n "${2:-}" ] || { log "usage: bench/run.sh --report-only LOG_DIR"; exit 2; }
  cmd="bench/run.sh"
  [ -f "$2/command.txt" ] && cmd="$(cat "$2/command.txt")"
  report "$2" "$cmd"
  exit 0
fi

PEERS_DIR="$(cd "${PEERS_DIR:-$REPO/../shared/peers}" && pwd)"
[ -x "$PEERS_DIR/run_peers.sh" ] || { log "no run_peers.sh in $PEERS_DIR; set PEERS_DIR"; exit 1; }

if [ "${1:-}" = "--arrow-only" ]; then
  RESULTS="$HERE/results"
  mkdir -p "$RESULTS"
  arrow_step "$RESULTS"
  cmd="bench/run.sh"
  [ -f "$RESULTS/command.txt" ] && cmd="$(cat "$RESULTS/command.txt")"
  report "$RESULTS" "$cmd"
  exit 0
fi

export VENV="${VENV:-/tmp/peers/tfenv}"
export LOG_DIR="${LOG_DIR:-/tmp/peers/logs/tfrecord-rs-$(date +%Y%m%d-%H%M%S)}"
export TFRECORD_RS_REPO="$REPO"
mkdir -p "$LOG_DIR"

have_modules() { # python, modules...
  local py="$1"; shift
  [ -x "$py" ] && "$py" - "$@" <<'PYEOF' 2>/dev/null
import importlib.util as u, sys
sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)
PYEOF
}

# A venv that reuses .venv-interop's TensorFlow (same interpreter) instead of downloading it.
INTEROP="$REPO/.venv-interop"
if ! have_modules "$VENV/bin/python" tensorflow tfrecord fastavro \
   && have_modules "$INTEROP/bin/python" tensorflow; then
  log "making $VENV on top of $INTEROP (TensorFlow reused; installing tfrecord, fastavro)"
  "$INTEROP/bin/python" -m venv "$VENV"
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  base="$("$INTEROP/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$base" > "$site/zz-tfrecord-rs-interop.pth"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install --quiet tfrecord fastavro
fi

# The command as a reader re-types it: the harness path relative to the repository (never this
# machine's absolute path).
PEERS_SHOWN="$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$PEERS_DIR" "$REPO")"
CMD="REPS=${REPS:-5} ROUNDS=${ROUNDS:-1} bench/run.sh${*:+ $*}   # harness: PEERS_DIR=$PEERS_SHOWN"
echo "$CMD" > "$LOG_DIR/command.txt"
log "harness: $PEERS_DIR/run_peers.sh $* (REPS=${REPS:-5} ROUNDS=${ROUNDS:-1}); logs in $LOG_DIR"
log "load before the run: $(cat /proc/loadavg)"
cat /proc/loadavg > "$LOG_DIR/load-before.txt"
commit="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$REPO" status --porcelain 2>/dev/null)" ]; then commit="$commit + uncommitted changes"; fi
echo "$commit" > "$LOG_DIR/commit.txt"
{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "cores (nproc): $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel: $(uname -r)"
  echo "rustc: $(rustc --version)"
  echo "date: $(date -u +%FT%TZ)"
} > "$LOG_DIR/facts.txt"
# Load samples every 10 s during the run (the machine may be shared): quoted in BENCHMARKS.md.
( while sleep 10; do echo "$(date +%s) $(cat /proc/loadavg)"; done ) > "$LOG_DIR/load-samples.txt" &
sampler=$!
rc=0
(cd "$PEERS_DIR" && CANDIDATES_DIR="$HERE/candidates" ./run_peers.sh "$@") || rc=$?
# The command-line paths beside the library's reads, in one tfrecord-bench run of their own.
log "cli: tfrecord-bench --ops read_raw,read_parse,cli (mnist, ctr)"
(cd "$REPO" && cargo build --release --locked --quiet -p tfrecord-bench -p tfrecord-cli) || rc=$?
"${CARGO_TARGET_DIR:-$REPO/target}/release/tfrecord-bench" --data "${DATA_DIR:-/tmp/peers/data}" \
  --out "${OUT_DIR:-/tmp/peers/out}" --reps "${REPS:-5}" --workloads mnist,ctr \
  --ops read_raw,read_parse,cli --variants st,convert_of,cat_json,from_json,verify_decode \
  > "$LOG_DIR/cli.results" || rc=$?
# The data set rows: tfrecord-dataset's criterion bench (8 shards on 1 and 2 threads; a shuffle
# buffer of 10,000 against none), each benchmark's median kept as one JSON line.
# The steps before wrote gigabytes (convert, from-json, Parquet): the kernel writes them back
# on a core of its own for tens of seconds, which the 2-thread rows would measure. Wait for it.
log "sync: writing back what the steps before wrote"
sync
log "dataset: cargo bench -p tfrecord-dataset --bench dataset"
(cd "$REPO" && cargo bench --locked --quiet -p tfrecord-dataset --bench dataset -- --noplot) || rc=$?
python3 - "${CARGO_TARGET_DIR:-$REPO/target}/criterion" > "$LOG_DIR/dataset.results" <<'PYEOF' || rc=$?
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "dataset_*", "*", "new", "estimates.json"))):
    bench = path.split(os.sep)[-3]
    group = path.split(os.sep)[-4]
    with open(path) as fh:
        median = json.load(fh)["median"]["point_estimate"]
    print(json.dumps({"group": group, "bench": bench, "median_ns": median}))
PYEOF
arrow_step "$LOG_DIR" || rc=$?
kill "$sampler" 2>/dev/null || true
cat /proc/loadavg > "$LOG_DIR/load-after.txt"
log "load after the run: $(cat /proc/loadavg)"
# Keep this run's raw logs in the repository: `bench/run.sh --report-only bench/results`
# rewrites BENCHMARKS.md from them.
RESULTS="$HERE/results"
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
cp "$LOG_DIR"/*.log "$LOG_DIR"/*.txt "$LOG_DIR"/*.results "$RESULTS"/ 2>/dev/null || true
report "$RESULTS" "$CMD"
exit "$rc"
