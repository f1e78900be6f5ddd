#!/usr/bin/env bash
# A fuzzing campaign: every target (or the ones named) under libFuzzer for SECONDS each, one
# after the other, then the executions and the outcome of each.
#
#   fuzz/run.sh [SECONDS] [TARGET...]        (SECONDS defaults to 60)
#
# Builds with the stable toolchain (RUSTC_BOOTSTRAP=1 lets it take the sanitizer flags), into
# $CARGO_TARGET_DIR/fuzz when that is set, else fuzz/target. Each target reads its committed
# corpus and regressions and writes the new inputs it finds to a scratch corpus beside the build
# ($target_dir/corpus/<target>), so the committed corpus only changes by hand. A crash, a leak,
# a timeout or an out-of-memory leaves its input in fuzz/artifacts/<target>/; replay one with
# `cargo fuzz run <target> <file>`, or commit it to fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

seconds="${1:-60}"
shift || true
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^tfrecord-fuzz$')
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
target_dir="${CARGO_TARGET_DIR:+$CARGO_TARGET_DIR/fuzz}"
target_dir="${target_dir:-$PWD/target}"
cargo fuzz build -O --target-dir "$target_dir"

# One malloc over 512 MiB, or a process over 2 GiB (AddressSanitizer's shadow memory and
# quarantine included), is a finding; the heap bound of each target is far tighter.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=30)

summary=()
for t in "${targets[@]}"; do
    scratch="$target_dir/corpus/$t"
    mkdir -p "$scratch" "artifacts/$t"
    log="$target_dir/$t.log"
    seeds=("corpus/$t")
    [[ -d "regressions/$t" ]] && seeds+=("regressions/$t")
    printf '\n==> %s for %ss\n' "$t" "$seconds"
    status=clean
    if ! cargo fuzz run -O --target-dir "$target_dir" "$t" "$scratch" "${seeds[@]}" -- \
        -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" >"$log" 2>&1; then
        status="FAILED (see $log and artifacts/$t/)"
    fi
    tail -n 25 "$log"
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    summary+=("$(printf '%-12s %12s executions  %s' "$t" "${execs:-?}" "$status")")
done

printf '\n==> executions per target (%ss each)\n' "$seconds"
printf '%s\n' "${summary[@]}"
