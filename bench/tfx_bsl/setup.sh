#!/usr/bin/env bash
# Creates (once) the virtualenv .venv-tfxbsl at the repository root with the pinned tfx-bsl,
# TensorFlow and pyarrow of bench/tfx_bsl/requirements.txt, and prints its python's path on
# stdout. A later run reuses it while requirements.txt is unchanged; a virtualenv made from an
# older requirements.txt is brought up to date.
#
#   bench/tfx_bsl/setup.sh            # prints e.g. /path/to/repo/.venv-tfxbsl/bin/python
#   PYTHON=python3.11 bench/tfx_bsl/setup.sh
#
# Needs the package index (or a warm pip cache) on the first run; the environment is ~3 GB.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/.venv-tfxbsl"
REQ="$HERE/requirements.txt"
# The marker holds the sha256 of the requirements.txt the virtualenv was completed from.
MARKER="$VENV/.tfxbsl-installed"

export PIP_NO_INPUT=1
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf 'tfx_bsl setup: %s\n' "$*" >&2; }

pick_python() {
    if [[ -n "${PYTHON:-}" ]]; then
        printf '%s\n' "$PYTHON"
    elif command -v python3.11 >/dev/null 2>&1; then
        printf '%s\n' python3.11
    else
        printf '%s\n' python3
    fi
}

want="$(sha256sum "$REQ" | cut -d' ' -f1)"

venv_ready() {
    [[ -x "$VENV/bin/python" ]] &&
        [[ -f "$MARKER" ]] &&
        [[ "$(cat "$MARKER")" == "$want" ]] &&
        "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1
}

if ! venv_ready; then
    py="$(pick_python)"
    if [[ -d "$VENV" ]] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
        log "removing the incomplete virtualenv $VENV"
        rm -rf "$VENV"
    fi
    if [[ ! -d "$VENV" ]]; then
        log "creating $VENV with $py ($("$py" --version 2>&1))"
        "$py" -m venv "$VENV"
    fi
    rm -f "$MARKER"
    log "installing $REQ (tfx-bsl, TensorFlow, pyarrow and their requirements)"
    "$VENV/bin/python" -m pip install --quiet -r "$REQ"
    TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" -c '
import pyarrow, tensorflow
from tfx_bsl.coders import example_coder, sequence_example_coder
example_coder.ExamplesToRecordBatchDecoder().DecodeBatch([b""])
' >/dev/null 2>&1 || {
        log "the installed tfx_bsl does not import or decode; see: $VENV/bin/python -c 'import tfx_bsl.coders.example_coder'"
        exit 1
    }
    printf '%s\n' "$want" >"$MARKER"
    log "ready: $("$VENV/bin/python" -c 'import importlib.metadata as m; print(", ".join(p + " " + m.version(p) for p in ("tfx-bsl", "tensorflow", "pyarrow", "protobuf", "numpy")))')"
fi
printf '%s\n' "$VENV/bin/python"
