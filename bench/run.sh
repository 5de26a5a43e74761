#!/usr/bin/env bash
# Benchmarks for `make bench`. They print figures; they never fail a build on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=target/release/mcp-harness
runs=5

echo "== stdio scenario library, wall time over $runs runs (release build, $(nproc) cores) =="
best=""
for i in $(seq "$runs"); do
    start=$(date +%s%N)
    "$HARNESS" run scenarios/stdio --reports "$(mktemp -d)" -q >/dev/null || { echo "run $i failed; see make run"; exit 1; }
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "run $i: ${ms} ms"
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
count=$(find scenarios/stdio -name '*.yaml' | wc -l)
echo "stdio library: $count scenarios, best wall time ${best} ms (target: under 10000 ms)"

# The HTTP mock's throughput with recording on (wrk; skipped when wrk is missing).
bash bench/http-mock.sh
