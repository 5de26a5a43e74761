#!/usr/bin/env bash
# `make fuzz`: runs each fuzz target for a bounded time and fails on the first crash.
# Usage: fuzz/run.sh SECONDS TARGET...   (README.md, "Fuzzing")
set -euo pipefail
cd "$(dirname "$0")"
seconds="$1"
shift

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

# libFuzzer needs unstable compiler flags. A nightly toolchain when one is installed; else
# stable with RUSTC_BOOTSTRAP=1, because CI machines cannot download a toolchain.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

# No sanitizer: the workspace denies unsafe code, so what fuzzing finds here is panics, hangs
# and runaway memory, which libFuzzer catches by itself, at twice the speed of ASan.
flags=(--sanitizer none)

# Seed corpora, made from the repo's own scenario files into corpus/<target>/ (not
# committed; libFuzzer adds what it finds there): the scenario files themselves, their
# inline JSON results as JSON-RPC lines, those lines as SSE events, and as 2026-07-28 POSTs.
seed() {
  local target="$1" dir="corpus/$1"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir")" ] && return
  local n=0 file
  for file in $(find ../scenarios -name '*.yaml' | sort); do
    n=$((n + 1))
    local lines
    lines=$(sed -n 's/^ *result: \({.*}\) *$/{"jsonrpc":"2.0","id":1,"result":\1}/p' "$file")
    case "$target" in
      scenario_loader) cp "$file" "$dir/$n.yaml" ;;
      jsonl_framer) [ -n "$lines" ] && printf '%s\n' "$lines" >"$dir/$n" ;;
      sse_parser) [ -n "$lines" ] && printf 'retry: 1000\n' >"$dir/$n" &&
        printf '%s\n' "$lines" | awk '{ printf "id: %d\ndata: %s\n\n", NR, $0 }' >>"$dir/$n" ;;
      http_request) [ -n "$lines" ] && printf 'POST /mcp?session_id=1\nmcp-protocol-version: 2026-07-28\nmcp-method: tools/call\nmcp-name: echo\nmcp-param-region: =?base64?ZXU=?=\n\n%s' \
        "$(printf '%s\n' "$lines" | head -1)" >"$dir/$n" ;;
    esac
  done
  return 0
}

"${fuzz[@]}" build "${flags[@]}"
status=0
for target in "$@"; do
  seed "$target"
  log="artifacts/$target.log"
  mkdir -p artifacts
  echo "== fuzz $target for ${seconds}s"
  if "${fuzz[@]}" run "${flags[@]}" "$target" "corpus/$target" "regressions/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|peak_rss_mb)' "$log" || tail -3 "$log"
  else
    status=1
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" | head -5 || true
    saved=$(grep -o 'Test unit written to [^ ]*' "$log" | sed 's/Test unit written to //' || true)
    echo "FUZZ CRASH in $target: input saved to ${saved:-fuzz/artifacts/$target/} (full log: fuzz/$log)"
    echo "  replay: cd fuzz && ${fuzz[*]} run ${flags[*]} $target ${saved:-<input>}"
    echo "  then fix the code and add the input under fuzz/regressions/$target/"
  fi
done
exit $status
