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
# SCENARIOS (default scenarios), HARNESS (default $CARGO_TARGET_DIR/debug/mcp-harness, else target/debug/mcp-harness).
#
# SOAK_PROFILE=heavy: about 8× CPU oversubscription, what a shared CI runner can look like —
# a busy loop per core, 4 × cores runs at once (each a mock process, and for a driver a
# client process, beside the harness), and a cargo build of one crate and its dependencies
# from scratch, over and over, into a temp dir (SOAK_CHURN=0 leaves it out). Defaults to 10
# repetitions. SOAK_MAKE_TEST=N then runs `make test` N times under the same load and
# prints each one's result (its output in $SOAK_DIR/make-test-<i>.log).
set -euo pipefail
cd "$(dirname "$0")/.."

cores="$(nproc)"
profile="${SOAK_PROFILE:-default}"
case "$profile" in
  default) runs="${SOAK_RUNS:-20}"; jobs="${SOAK_JOBS:-$((2 * cores))}"; churn=0 ;;
  heavy) runs="${SOAK_RUNS:-10}"; jobs="${SOAK_JOBS:-$((4 * cores))}"; churn="${SOAK_CHURN:-1}" ;;
  *) echo "soak: SOAK_PROFILE is 'default' or 'heavy', not '$profile'" >&2; exit 2 ;;
esac
make_tests="${SOAK_MAKE_TEST:-0}"
out="${SOAK_DIR:-reports/soak}"
scenarios="${SCENARIOS:-scenarios}"
harness="${HARNESS:-${CARGO_TARGET_DIR:-target}/debug/mcp-harness}"
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
churn_dir=""
stop_hogs() {
  [[ ${#hogs[@]} -eq 0 ]] || kill -- "${hogs[@]}" 2>/dev/null || true
  # The churn is a process group of its own (cargo and its rustc children).
  [[ -z "${churn_pid:-}" ]] || kill -- "-$churn_pid" 2>/dev/null || true
  [[ -z "$churn_dir" ]] || rm -rf "$churn_dir"
}
trap stop_hogs EXIT
if [[ "${SOAK_HOG:-1}" != 0 ]]; then
  for _ in $(seq "$cores"); do
    (while :; do :; done) &
    hogs+=("$!")
  done
fi
if [[ "$churn" != 0 ]]; then
  churn_dir="$(mktemp -d)"
  # A build from scratch of a crate with a few dozen dependencies, again and again: the
  # compiler's bursts of many processes, as a CI runner's neighbours produce.
  setsid bash -c "while :; do CARGO_TARGET_DIR='$churn_dir/t' cargo build -q --offline -p mcp-scenario >/dev/null 2>&1; rm -rf '$churn_dir/t'; done" &
  churn_pid=$!
fi

status=0
for spec in "${targets[@]}"; do
  arg="$(target_arg "$spec")"
  t="$(label_of "$spec")"
  rm -rf "${out:?}/$t" && mkdir -p "$out/$t"
  echo "== $t: $runs repetitions of $scenarios, -j $jobs, ${#hogs[@]} busy loops$([[ "$churn" != 0 ]] && echo ", a cargo build churning")"
  for i in $(seq "$runs"); do
    dir="$out/$t/$i"
    start=$(date +%s%N)
    # Failing runs are expected (a driver's baseline); only differences between repetitions
    # count here. Transcripts are compared between repetitions (soak/compare.py), so
    # snapshots are neither compared nor written.
    "$harness" run "$scenarios" --target "$arg" -j "$jobs" --reports "$dir" --quiet --no-snapshots >"$dir.log" 2>&1 || true
    [[ -f "$dir/results.json" ]] || { echo "run $i wrote no results (see $dir.log)"; status=1; continue; }
    echo "run $i: $(grep -E '^[0-9]+ passed, ' "$dir.log" | tail -n 1) ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
  done
  # A driver's baseline names the runs that are its own races (`flaky:`): listed apart.
  baseline="clients/baselines/$t.yml"
  python3 soak/compare.py "$out/$t" $([[ -f "$baseline" ]] && echo "$baseline") || status=1
  # Runs the machine starved, re-run and settled or found flaky (the harness's own view).
  python3 - "$out/$t" <<'PY'
import json, sys
from pathlib import Path
reps = sorted((p for p in Path(sys.argv[1]).iterdir() if (p / "results.json").is_file()), key=lambda p: int(p.name))
starved = flaky = 0
for rep in reps:
    for r in json.loads((rep / "results.json").read_text())["runs"]:
        starved += bool(r.get("load"))
        flaky += r["status"] == "flaky_under_load"
print(f"starved runs re-run: {starved} over {len(reps)} repetitions, {flaky} of them flaky under load")
PY
done
mkdir -p "$out"
for i in $(seq "$make_tests"); do
  start=$(date +%s)
  if make test >"$out/make-test-$i.log" 2>&1; then result=passed; else result=FAILED; status=1; fi
  echo "make test $i of $make_tests under the load: $result in $(( $(date +%s) - start )) s ($out/make-test-$i.log)"
done
exit "$status"
