#!/usr/bin/env bash
# The tfx_bsl peer of the benchmark: makes the tfx_bsl virtualenv (setup.sh), makes sure the
# peer harness's workload files exist, and runs bench_tfx_bsl.py, which prints RESULT lines
# ("peer": "tfx_bsl", "variant": "st") on stdout in the harness's protocol.
#
#   bench/tfx_bsl/run.sh                                  # mnist, ctr, seq; all ops; REPS=5
#   REPS=3 bench/tfx_bsl/run.sh --workloads ctr --ops to_arrow_mem
#   bench/tfx_bsl/run.sh > tfx_bsl.log && python3 ../shared/peers/summarize.py tfx_bsl.log
#
# Arguments are passed to bench_tfx_bsl.py. The script also fits the harness's candidate
# slot (candidates/<name>.sh, with DATA_DIR and REPS from run_peers.sh).
#
# Env:
#   DATA_DIR    the workload files and sidecars (default /tmp/peers/data)
#   REPS        timed repetitions per measurement (default 5)
#   PEERS_DIR   the peer harness, whose gen_data.py makes missing workload files
#               (default: ../shared/peers beside the repository)
#   GEN_PYTHON  the python (with TensorFlow) that runs gen_data.py (default: the repository's
#               .venv-interop if present, else the tfx_bsl virtualenv's)
set -euo pipefail
HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
export DATA_DIR="${DATA_DIR:-/tmp/peers/data}"
export REPS="${REPS:-5}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
export CUDA_VISIBLE_DEVICES=-1
log() { echo "[tfx_bsl/run.sh] $*" >&2; }
# TensorFlow's start-up notices (absl before InitializeLog, no GPU present) say nothing here.
quiet() { grep -v -E "^(WARNING: All log messages|I0000|E0000 .*cuInit|To enable the following)" >&2 || true; }

PY="$("$HERE/setup.sh")"

# The workloads asked for (--workloads a,b or --workloads=a,b; default all three).
WORKLOADS=(mnist ctr seq)
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --workloads) IFS=, read -r -a WORKLOADS <<<"${args[$((i + 1))]:-}" ;;
    --workloads=*) IFS=, read -r -a WORKLOADS <<<"${args[$i]#--workloads=}" ;;
  esac
done
missing=()
for w in "${WORKLOADS[@]}"; do
  [ -f "$DATA_DIR/$w.json" ] || missing+=("$w")
done
if [ "${#missing[@]}" -gt 0 ]; then
  PEERS_DIR="${PEERS_DIR:-$REPO/../shared/peers}"
  [ -f "$PEERS_DIR/gen_data.py" ] || {
    log "no workload files (${missing[*]}) in $DATA_DIR and no gen_data.py in $PEERS_DIR; set DATA_DIR or PEERS_DIR"
    exit 1
  }
  GEN_PYTHON="${GEN_PYTHON:-}"
  if [ -z "$GEN_PYTHON" ]; then
    if [ -x "$REPO/.venv-interop/bin/python" ]; then GEN_PYTHON="$REPO/.venv-interop/bin/python"; else GEN_PYTHON="$PY"; fi
  fi
  log "making ${missing[*]} in $DATA_DIR with $PEERS_DIR/gen_data.py"
  "$GEN_PYTHON" "$PEERS_DIR/gen_data.py" --out "$DATA_DIR" "${missing[@]}" 2> >(quiet)
fi

log "running bench_tfx_bsl.py (DATA_DIR=$DATA_DIR REPS=$REPS) $*"
"$PY" "$HERE/bench_tfx_bsl.py" "$@" 2> >(quiet)
