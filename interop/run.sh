#!/usr/bin/env bash
# Live TensorFlow interop check for the `tfrecord` CLI (see interop/README.md).
#
#   bash interop/run.sh              build the CLI (release) and run interop/check_tf.py,
#                                    check_derive.py, check_parse.py, check_import.py,
#                                    check_index.py and check_arrow.py
#   TFRECORD_BIN=/path/to/tfrecord bash interop/run.sh    use that binary instead of building
#
# The first run creates $REPO/.venv-interop and installs the pinned TensorFlow, the PyPI
# `tfrecord` package and pyarrow into it from the package index; later runs reuse it (a
# virtualenv made before a requirement was added gets it installed). Extra arguments are passed
# to check_tf.py (--keep, --seed).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
VENV="$REPO/.venv-interop"
TF_REQUIREMENT="tensorflow-cpu==2.21.0"
# The PyPI `tfrecord` package: check_index.py compares `tfrecord index` with its create_index.
TFRECORD_PY_REQUIREMENT="tfrecord==1.14.6"
# pyarrow: check_arrow.py reads and writes Parquet with it (this release installs beside
# TensorFlow's numpy 2 and protobuf, and has no requirements of its own).
PYARROW_REQUIREMENT="pyarrow==26.0.1"
# fastavro: check_import.py compares `from-avro --reader-schema` with its schema resolution.
FASTAVRO_REQUIREMENT="fastavro==1.13.1"
REQUIREMENTS=("$TF_REQUIREMENT" "$TFRECORD_PY_REQUIREMENT" "$PYARROW_REQUIREMENT" "$FASTAVRO_REQUIREMENT")
# The marker holds what was installed; a virtualenv whose marker says less is completed.
MARKER="$VENV/.interop-installed"

export TF_CPP_MIN_LOG_LEVEL=2
export CUDA_VISIBLE_DEVICES=-1
export TF_ENABLE_ONEDNN_OPTS=0 # only silences a start-up notice: the check does no math
export PIP_NO_INPUT=1
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf 'interop: %s\n' "$*" >&2; }

pick_python() {
    if [[ -n "${PYTHON:-}" ]]; then
        printf '%s\n' "$PYTHON"
    elif command -v python3.11 >/dev/null 2>&1; then
        printf '%s\n' python3.11
    else
        printf '%s\n' python3
    fi
}

venv_ready() {
    [[ -x "$VENV/bin/python" ]] &&
        [[ -f "$MARKER" ]] &&
        [[ "$(cat "$MARKER")" == "${REQUIREMENTS[*]}" ]] &&
        "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1
}

make_venv() {
    local py
    py="$(pick_python)"
    if [[ -d "$VENV" ]] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
        log "removing the incomplete virtualenv $VENV"
        rm -rf "$VENV"
    fi
    if [[ ! -d "$VENV" ]]; then
        log "creating $VENV with $py"
        if ! "$py" -m venv "$VENV"; then
            # Some distributions ship python3 without ensurepip: make the venv without pip and
            # let the interpreter's own pip install into it.
            rm -rf "$VENV"
            "$py" -m venv --without-pip "$VENV"
        fi
    fi
    rm -f "$MARKER"
    log "installing ${REQUIREMENTS[*]} (needs the package index or a warm pip cache)"
    if "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
        "$VENV/bin/python" -m pip install --quiet "${REQUIREMENTS[@]}"
    else
        "$py" -m pip --python "$VENV/bin/python" install --quiet "${REQUIREMENTS[@]}"
    fi
    "$VENV/bin/python" -c 'import tensorflow, google.protobuf, pyarrow.parquet, fastavro' >/dev/null
    # Imported apart: the package's copy of example.proto clashes with TensorFlow's.
    "$VENV/bin/python" -c 'import tfrecord.tools.tfrecord2idx, tfrecord.reader' >/dev/null
    printf '%s\n' "${REQUIREMENTS[*]}" >"$MARKER"
}

if ! venv_ready; then
    make_venv
fi

# The target directory as cargo sees it (CARGO_TARGET_DIR, .cargo/config.toml, or target/).
TARGET_DIR="$(cd "$REPO" && cargo metadata --format-version 1 --no-deps --locked |
    "$VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
if [[ -n "${TFRECORD_BIN:-}" ]]; then
    BIN="$TFRECORD_BIN"
else
    log "building the CLI: cargo build --release -p tfrecord-cli --locked"
    (cd "$REPO" && cargo build --release -p tfrecord-cli --locked)
    BIN="$TARGET_DIR/release/tfrecord"
fi
log "building the derived-type example: cargo build --release -p tfrecord-examples --example derive_interop --locked"
(cd "$REPO" && cargo build --release -p tfrecord-examples --example derive_interop --locked)
EXAMPLE_BIN="$TARGET_DIR/release/examples/derive_interop"

for exe in "$BIN" "$EXAMPLE_BIN"; do
    if [[ ! -x "$exe" ]]; then
        log "no executable at $exe"
        exit 1
    fi
done

status=0
"$VENV/bin/python" "$HERE/check_tf.py" --bin "$BIN" "$@" </dev/null || status=1
"$VENV/bin/python" "$HERE/check_derive.py" --example-bin "$EXAMPLE_BIN" </dev/null || status=1
"$VENV/bin/python" "$HERE/check_parse.py" --bin "$BIN" </dev/null || status=1
"$VENV/bin/python" "$HERE/check_import.py" --bin "$BIN" </dev/null || status=1
"$VENV/bin/python" "$HERE/check_index.py" --bin "$BIN" </dev/null || status=1
"$VENV/bin/python" "$HERE/check_arrow.py" --bin "$BIN" </dev/null || status=1
exit "$status"
