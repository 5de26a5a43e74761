#!/usr/bin/env bash
# Throughput of the Streamable HTTP mock with recording on: `wrk -t2 -c8` POSTing a
# tools/list request that the bench scenario answers with a scripted JSON reply
# (`reply_always`). Prints wrk's figures and the mock's RSS before and after, and the size
# of the record written. A figure, never a pass/fail. DURATION=20s covers ~1M requests.
set -euo pipefail
cd "$(dirname "$0")/.."
MOCK=${MOCK:-${CARGO_TARGET_DIR:-target}/release/mcp-mock}
DURATION=${DURATION:-5s}
if ! command -v wrk >/dev/null; then
    echo "wrk is not installed (Debian: apt-get install -y wrk); skipping the HTTP mock benchmark"
    exit 0
fi
run=$(mktemp -d)
"$MOCK" http --scenario bench/json-reply.yaml --run-dir "$run/record" --deadline-ms 600000 >"$run/listening" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$run"' EXIT
# The mock prints one `listening <url>` line once bound (bounded wait: 10 s).
for _ in $(seq 200); do [ -s "$run/listening" ] && break; sleep 0.05; done
url=$(awk '{print $2}' "$run/listening")
[ -n "$url" ] || { echo "the HTTP mock did not start"; exit 1; }
rss() { awk '/VmRSS/ {print $2 " " $3}' "/proc/$pid/status"; }
echo "== HTTP mock throughput, recording on ($(nproc) cores): wrk -t2 -c8 -d$DURATION -s bench/post.lua $url =="
echo "mock RSS before: $(rss)"
wrk -t2 -c8 -d"$DURATION" -s bench/post.lua "$url"
echo "mock RSS after:  $(rss)"
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
echo "record: $(cat "$run"/record/conn-*.jsonl | wc -l) events, $(du -sh "$run/record" | cut -f1) (target: >= 54000 req/s, RSS flat)"
