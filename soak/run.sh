#!/usr/bin/env bash
# `make soak`: the whole scenario library N times, twice as many runs at once as there are
# cores, while a CPU hog keeps every core busy; then every run whose outcome or normalised
# transcript differed from the first repetition is listed (soak/compare.py). A flake found
# here is fixed at its mechanism (a timing assumption, a race in the mock's recording, a
# snapshot line that depends on who closed first), never by widening one scenario.
#
#   soak/run.sh [target...]     bundled (default) or label=<--target value>
#
# Environment: SOAK_RUNS (default 20), SOAK_JOBS (default 2 × cores), SOAK_HOG (default 1:
# one busy loop per core during the runs; 0 for none), SOAK_DIR (default reports/soak),
# SCENARIOS (default scenarios), HARNESS (default target/debug/mcp-harness).
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${SOAK_RUNS:-20}"
cores="$(nproc)"
jobs="${SOAK_JOBS:-$((2 * cores))}"
out="${SOAK_DIR:-reports/soak}"
scenarios="${SCENARIOS:-scenarios}"
harness="${HARNESS:-target/debug/mcp-harness}"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(bundled)

# A target is `bundled` or `label=<--target value>` (`make soak` passes each driver in
# SOAK_CLIENTS as `name=<its Makefile target>`, so the launchers live in one place).
target_arg() {
  case "$1" in
    bundled) echo bundled ;;
    *=*) echo "${1#*=}" ;;
    *) echo "soak: '$1' is neither bundled nor label=<target> (e.g. ts=cmd+persistent:clients/typescript/run)" >&2; return 1 ;;
  esac
}
label_of() { echo "${1%%=*}"; }

[[ -x "$harness" ]] || { echo "soak: $harness is missing: run 'make build' first" >&2; exit 1; }

hogs=()
stop_hogs() { [[ ${#hogs[@]} -eq 0 ]] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
if [[ "${SOAK_HOG:-1}" != 0 ]]; then
  for _ in $(seq "$cores"); do
    (while :; do :; done) &
    hogs+=("$!")
  done
fi

status=0
for spec in "${targets[@]}"; do
  arg="$(target_arg "$spec")"
  t="$(label_of "$spec")"
  rm -rf "${out:?}/$t" && mkdir -p "$out/$t"
  echo "== $t: $runs repetitions of $scenarios, -j $jobs, ${#hogs[@]} busy loops"
  for i in $(seq "$runs"); do
    dir="$out/$t/$i"
    start=$(date +%s%N)
    # Failing runs are expected (a driver's baseline); only differences between repetitions
    # count here. Transcripts are compared between repetitions (soak/compare.py), so
    # snapshots are neither compared nor written.
    "$harness" run "$scenarios" --target "$arg" -j "$jobs" --reports "$dir" --quiet --no-snapshots >"$dir.log" 2>&1 || true
    [[ -f "$dir/results.json" ]] || { echo "run $i wrote no results (see $dir.log)"; status=1; continue; }
    echo "run $i: $(tail -n 1 "$dir.log") ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
  done
  python3 soak/compare.py "$out/$t" || status=1
done
exit "$status"
