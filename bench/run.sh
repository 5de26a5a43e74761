#!/usr/bin/env bash
# Benchmarks for `make bench` (method and recorded figures: BENCHMARKS.md). They print
# figures, each median beside its peer; they never fail a build on speed. Every section runs
# BENCH_REPS rounds and each round runs every contender once, in turn, so machine noise
# falls on all of them alike; the medians are printed again in one table at the end.
#
# Environment:
#   BENCH_REPS=5          rounds of the bundled library and of every micro-benchmark
#   BENCH_DRIVER_REPS=$BENCH_REPS  rounds of each third-party driver's library pass (a minute or
#                         more each: five rounds of four drivers take about half an hour;
#                         BENCH_DRIVER_REPS=1 for a first look, not a median)
#   BENCH_CLIENTS=""      drivers to time besides bundled (make bench CLIENTS="rmcp python-v2")
#   BENCH_MODES=""        each driver's target kind, "name=cmd+persistent …" (make bench passes
#                         the Makefile's; a driver not named runs one-shot, cmd:)
#   BENCH_JOBS=""         runs at once per driver where the Makefile sets one, "rmcp=8 …"
#   BENCH_RT=20000        sequential round trips per stdio / HTTP client run
#   BENCH_WRK=5s          duration of each wrk run
#   BENCH_LONG=1M         requests of the long HTTP mock run (RSS and rate every fifth)
#   BENCH_HOSTILE_MIB=1024  size of the hostile line / SSE event
#   BENCH_JUDGE_MESSAGES=100000  client messages in the record the judging section judges
#   BENCH_SECTIONS="library stdio http wrk long hostile judging"
#                         (one section alone: BENCH_SECTIONS=judging bash bench/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}/release
HARNESS=$TARGET/mcp-harness
MOCK=$TARGET/mcp-mock
RMCP_TARGET=${MCP_RMCP_TARGET_DIR:-clients/rmcp/target}
RMCP_BENCH=$RMCP_TARGET/release/stdio-roundtrips-rmcp
REPS=${BENCH_REPS:-5}
DRIVER_REPS=${BENCH_DRIVER_REPS:-$REPS}
RT=${BENCH_RT:-20000}
WRK_FOR=${BENCH_WRK:-5s}
JUDGE_MESSAGES=${BENCH_JUDGE_MESSAGES:-100000}
SECTIONS=${BENCH_SECTIONS:-library stdio http wrk long hostile judging}
read -r -a CLIENT_LIST <<<"${BENCH_CLIENTS:-}"

work=$(mktemp -d)
servers=()
cleanup() {
    for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

want() { [[ " $SECTIONS " == *" $1 "* ]]; }
# Appends one sample to the series named $1.
sample() { echo "$2" >>"$work/series-$1"; }
# The median of a series (the mean of the middle two when even); "-" when empty.
median() {
    [ -s "$work/series-$1" ] || { echo "-"; return; }
    sort -g "$work/series-$1" | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
count() { [ -s "$work/series-$1" ] && wc -l <"$work/series-$1" || echo 0; }
# "a/b" to two decimals, or "-".
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a=="-" || b=="-" || b==0) print "-"; else printf "%.2f\n", a/b}'; }
mib_of() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "-"; }

# Starts an HTTP peer (command in "$@") that prints `listening <url>`; sets $url and $peer.
start_peer() {
    local out=$work/listening-$RANDOM
    "$@" >"$out" 2>>"$work/peer-stderr" &
    peer=$!
    servers+=("$peer")
    for _ in $(seq 200); do [ -s "$out" ] && break; sleep 0.05; done
    url=$(awk '/^listening/ {print $2}' "$out")
    [ -n "$url" ] || { echo "a peer did not start: $*"; cat "$work/peer-stderr"; exit 1; }
}
stop_peer() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
mock_http() {
    record_dir=$work/record-$RANDOM
    start_peer "$MOCK" http --scenario bench/json-reply.yaml --run-dir "$record_dir" --deadline-ms 3600000
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r), $(rustc --version)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: other work runs beside these figures)"

# --- The scenario library: wall time and median per-scenario time, per target -----------
installed() { # driver name → its launcher, or nothing when it is not installed
    case "$1" in
        typescript) [ -f clients/typescript/node_modules/.mcp-harness-stamp ] && echo clients/typescript/run ;;
        python-v2) [ -f clients/python/.venv-v2/.mcp-harness-stamp ] && echo clients/python/run-v2 ;;
        python-v1) [ -f clients/python/.venv-v1/.mcp-harness-stamp ] && echo clients/python/run-v1 ;;
        rmcp) [ -x "$RMCP_TARGET/release/mcp-driver-rmcp" ] && echo clients/rmcp/run ;;
        *) return 0 ;;
    esac
}
library_targets=(bundled)
declare -A launcher=([bundled]=bundled) jobs_of=()
for c in "${CLIENT_LIST[@]}"; do
    l=$(installed "$c" || true)
    # The mode `make validate` uses: `make bench` passes the Makefile's client_mode_* in
    # BENCH_MODES ("typescript=cmd+persistent …"); `cmd` when not given.
    mode=cmd
    for m in ${BENCH_MODES:-}; do [ "${m%%=*}" = "$c" ] && mode=${m#*=}; done
    for m in ${BENCH_JOBS:-}; do [ "${m%%=*}" = "$c" ] && jobs_of[$c]=${m#*=}; done
    if [ -n "$l" ]; then library_targets+=("$c"); launcher[$c]="$mode:$l"; else launcher[$c]=""; fi
done
if want library; then
    echo
    echo "== scenario library (scenarios/), $REPS rounds bundled, $DRIVER_REPS per driver (drivers take minutes a pass) =="
    for c in "${CLIENT_LIST[@]}"; do [ -n "${launcher[$c]}" ] || echo "$c: not installed (clients/install.sh)"; done
    # Each target twice a round: the whole library, and the quick pass (`--tag '!slow'`: no
    # run that waits out a client's own default timeout, which alone sets the whole pass's
    # wall time: 30 s bundled, 60 s TypeScript).
    for round in $(seq "$(( REPS > DRIVER_REPS ? REPS : DRIVER_REPS ))"); do
        for t in "${library_targets[@]}"; do
            rounds=$DRIVER_REPS; [ "$t" = bundled ] && rounds=$REPS
            [ "$round" -le "$rounds" ] || continue
            for pass in whole quick; do
                dir=$work/library-$t-$pass-$round
                only=(); [ "$pass" = quick ] && only=(--tag '!slow')
                [ -n "${jobs_of[$t]:-}" ] && only+=(-j "${jobs_of[$t]}")
                "$HARNESS" run scenarios "${only[@]}" --target "${launcher[$t]}" --reports "$dir" --quiet >/dev/null 2>&1 || true
                [ -s "$dir/results.json" ] || { echo "round $round $t ($pass): no results.json (see make run)"; continue; }
                wall=$(jq '.wall_ms' "$dir/results.json")
                per=$(jq '[.runs[].duration_ms] | sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end' "$dir/results.json")
                n=$(jq '.runs | length' "$dir/results.json")
                passed=$(jq '[.runs[] | select(.status == "passed")] | length' "$dir/results.json")
                sample "wall-$t-$pass" "$wall"; sample "per-$t-$pass" "$per"
                echo "round $round $t ($pass): $n runs ($passed pass), wall ${wall} ms, median per run ${per} ms"
            done
        done
    done
fi

# --- stdio sequential round trips ------------------------------------------------------
if want stdio; then
    echo
    echo "== stdio sequential round trips/s, $RT tools/call each, $REPS rounds =="
    [ -x "$RMCP_BENCH" ] || echo "rmcp client: not built (the rmcp driver is not installed: clients/install.sh rmcp)"
    # Both ends on one CPU (BENCH_PIN=0: wherever the scheduler puts them): on a VM a
    # wake-up on the other CPU costs tens of microseconds, more than a whole round trip's
    # work, and falls on the contenders unevenly (BENCHMARKS.md, "Method").
    pin=()
    if [ "${BENCH_PIN:-1}" != 0 ] && command -v taskset >/dev/null; then pin=(taskset -c 0); echo "pinned to CPU 0 (BENCH_PIN=0 to not)"; fi
    # The mock as the harness runs it: recording into a run dir (without --run-dir it
    # would serve as a person's mock, which also watches its record to announce the end
    # of the script). A fresh dir per run: a run dir numbers its connections.
    mock_stdio() { echo "$MOCK" stdio bench/stdio-tools-call.yaml --run-dir "$work/stdio-run-$RANDOM$RANDOM"; }
    for round in $(seq "$REPS"); do
        ceiling=$("${pin[@]}" "$TARGET/stdio-roundtrips" --client blocking --n "$RT" -- "$TARGET/stdio-echo")
        echo_bundled=$("${pin[@]}" "$TARGET/stdio-roundtrips" --client bundled --n "$RT" -- "$TARGET/stdio-echo")
        # The least a recording server does (one envelope parse, one record write a round
        # trip): its record on the file system the mock's goes to, then to /dev/null (the
        # write kept, nothing stored).
        floor=$("${pin[@]}" "$TARGET/stdio-roundtrips" --client bundled --handshake --n "$RT" -- "$TARGET/stdio-recording-floor" "$work/floor-$round.jsonl")
        floor_null=$("${pin[@]}" "$TARGET/stdio-roundtrips" --client bundled --handshake --n "$RT" -- "$TARGET/stdio-recording-floor" /dev/null)
        rm -f "$work/floor-$round.jsonl"
        # shellcheck disable=SC2046  # the mock's command line, word-split on purpose
        mock_bundled=$("${pin[@]}" "$TARGET/stdio-roundtrips" --client bundled --handshake --n "$RT" -- $(mock_stdio))
        sample stdio-ceiling "$ceiling"; sample stdio-bundled-echo "$echo_bundled"; sample stdio-bundled-mock "$mock_bundled"
        sample stdio-bundled-floor "$floor"; sample stdio-bundled-floor-null "$floor_null"
        line="round $round: blocking↔echo $ceiling, bundled↔echo $echo_bundled, bundled↔floor $floor (record to /dev/null $floor_null), bundled↔mock $mock_bundled"
        if [ -x "$RMCP_BENCH" ]; then
            # rmcp lets the server's stderr through (the mock's notes): kept aside.
            # shellcheck disable=SC2046
            mock_rmcp=$("${pin[@]}" "$RMCP_BENCH" --n "$RT" -- $(mock_stdio) 2>>"$work/rmcp-stderr")
            sample stdio-rmcp-mock "$mock_rmcp"
            line="$line, rmcp↔mock $mock_rmcp"
        fi
        echo "$line"
    done
fi

# --- Streamable HTTP: the bundled client's sequential round trips ----------------------
if want http; then
    echo
    echo "== Streamable HTTP sequential round trips/s of the bundled client, $RT tools/call each, $REPS rounds =="
    mock_http; mock_url=$url; mock_pid=$peer
    start_peer "$TARGET/http-bare-hyper"; hyper_url=$url; hyper_pid=$peer
    for round in $(seq "$REPS"); do
        to_mock=$("$TARGET/http-roundtrips" --n "$RT" --url "$mock_url")
        to_hyper=$("$TARGET/http-roundtrips" --n "$RT" --url "$hyper_url")
        sample http-rt-mock "$to_mock"; sample http-rt-hyper "$to_hyper"
        echo "round $round: bundled→mock (recording on) $to_mock, bundled→bare hyper $to_hyper"
    done
    stop_peer "$mock_pid"; stop_peer "$hyper_pid"
fi

# --- Streamable HTTP: server throughput under wrk ----------------------------------------
need_wrk() {
    command -v wrk >/dev/null && return
    command -v apt-get >/dev/null && apt-get install -y wrk >/dev/null 2>&1 && return
    echo "wrk is not installed (Debian: apt-get install -y wrk); skipping"
    return 1
}
wrk_rate() { awk '/^Requests\/sec/ {printf "%.0f\n", $2}'; }
if want wrk && need_wrk; then
    echo
    echo "== HTTP server throughput, req/s: wrk -t2 -c8 -d$WRK_FOR -s bench/post.lua, a fresh server each run, $REPS rounds =="
    for round in $(seq "$REPS"); do
        line="round $round:"
        for peer_name in mock wiremock hyper; do
            case $peer_name in
                mock) mock_http ;;
                wiremock) start_peer "$TARGET/http-wiremock" ;;
                hyper) start_peer "$TARGET/http-bare-hyper" ;;
            esac
            rate=$(wrk -t2 -c8 -d"$WRK_FOR" -s bench/post.lua "$url" | tee "$work/wrk-$peer_name" | wrk_rate)
            grep -q "Non-2xx" "$work/wrk-$peer_name" && echo "($peer_name answered non-2xx: $(grep Non-2xx "$work/wrk-$peer_name"))"
            rss=$(mib_of "$peer")
            stop_peer "$peer"
            sample "wrk-$peer_name" "$rate"; sample "wrk-rss-$peer_name" "$rss"
            line="$line $peer_name $rate (RSS ${rss} MiB)"
        done
        echo "$line"
    done
fi

# --- The long HTTP mock run ------------------------------------------------------------
long=${BENCH_LONG:-1M}
long=$(echo "$long" | awk '{n=$1; m=1; if (n ~ /[kK]$/) m=1000; if (n ~ /[mM]$/) m=1000000; sub(/[kKmM]$/, "", n); print n*m}')
if want long && need_wrk; then
    mark=$((long / 5))
    echo
    echo "== HTTP mock, recording on, $long requests: wrk -t2 -c8 -d2s runs back to back, rate and RSS each time ~$mark more are done (one run) =="
    mock_http
    echo "start: RSS $(mib_of "$peer") MiB"
    # wrk only knows durations, so the run is cut in 2 s pieces and reported at each mark.
    total=0; next=$mark; since=0; since_s=0
    while [ "$total" -lt "$long" ]; do
        n=$(wrk -t2 -c8 -d2s -s bench/post.lua "$url" | awk '/requests in/ {print $1}')
        [ -n "$n" ] || { echo "wrk failed"; break; }
        total=$((total + n)); since=$((since + n)); since_s=$((since_s + 2))
        if [ "$total" -ge "$next" ] || [ "$total" -ge "$long" ]; then
            rate=$((since / since_s)); rss=$(mib_of "$peer")
            sample long-rate "$rate"; sample long-rss "$rss"
            echo "after $total: $rate req/s, RSS $rss MiB"
            since=0; since_s=0; next=$((next + mark))
        fi
    done
    stop_peer "$peer"
    echo "record: $(cat "$record_dir"/conn-*.jsonl 2>/dev/null | wc -l) events, $(du -sh "$record_dir" | cut -f1) on disk"
fi

# --- Hostile input: one message far over the cap ----------------------------------------
if want hostile; then
    mib=${BENCH_HOSTILE_MIB:-1024}
    echo
    echo "== bundled transports, a ${mib} MiB message (cap: the default 16 MiB), then the reply (one run each) =="
    for kind in stdio http; do
        out=$("$TARGET/hostile-input" "$kind" --mib "$mib" 2>&1 | tail -1)
        echo "$kind: $out"
        echo "$out" >"$work/hostile-$kind"
    done
fi

# --- Judging: one run's checks, rendering and redacted wire over a generated record -------
if want judging; then
    echo
    echo "== judging one run's record of $JUDGE_MESSAGES client messages (harness/benches/judging.rs), $REPS rounds =="
    # Built in the bench profile (release) by cargo itself: it links the harness library.
    ${CARGO:-cargo} bench -q -p mcp-harness --bench judging -- --messages "$JUDGE_MESSAGES" --rounds "$REPS" \
        | tee "$work/judging"
fi

# --- The table ------------------------------------------------------------------------
echo
echo "== medians ($REPS rounds unless said) =="
if want library; then
    for t in "${library_targets[@]}"; do
        printf '%-38s wall %8s ms   per run %6s ms   (%s rounds)\n' "library, $t" "$(median "wall-$t-whole")" "$(median "per-$t-whole")" "$(count "wall-$t-whole")"
        printf '%-38s wall %8s ms   per run %6s ms   (%s rounds; target < 30 s)\n' "library, $t, --tag '!slow'" "$(median "wall-$t-quick")" "$(median "per-$t-quick")" "$(count "wall-$t-quick")"
    done
    for c in "${CLIENT_LIST[@]}"; do [ -n "${launcher[$c]}" ] || printf '%-38s not installed\n' "library, $c"; done
fi
if want stdio; then
    c=$(median stdio-ceiling); e=$(median stdio-bundled-echo); m=$(median stdio-bundled-mock); r=$(median stdio-rmcp-mock)
    f=$(median stdio-bundled-floor); n=$(median stdio-bundled-floor-null)
    printf '%-38s %8s rt/s\n' "stdio blocking↔echo (ceiling)" "$c"
    printf '%-38s %8s rt/s   %sx ceiling (target >= 0.85)\n' "stdio bundled↔echo" "$e" "$(ratio "$e" "$c")"
    printf '%-38s %8s rt/s   %sx bundled↔echo; record to /dev/null: %s rt/s, %sx\n' "stdio bundled↔recording floor" "$f" "$(ratio "$f" "$e")" "$n" "$(ratio "$n" "$e")"
    printf '%-38s %8s rt/s   %sx bundled↔echo (target >= 0.8), %sx recording floor\n' "stdio bundled↔mock" "$m" "$(ratio "$m" "$e")" "$(ratio "$m" "$f")"
    printf '%-38s %8s rt/s   %sx bundled↔mock\n' "stdio rmcp↔mock" "$r" "$(ratio "$r" "$m")"
fi
if want http; then
    m=$(median http-rt-mock); h=$(median http-rt-hyper)
    printf '%-38s %8s rt/s\n' "HTTP bundled→bare hyper" "$h"
    printf '%-38s %8s rt/s   %sx bare hyper\n' "HTTP bundled→mock" "$m" "$(ratio "$m" "$h")"
fi
if want wrk && command -v wrk >/dev/null; then
    m=$(median wrk-mock); w=$(median wrk-wiremock); h=$(median wrk-hyper)
    printf '%-38s %8s req/s   RSS %s MiB\n' "wrk bare hyper" "$h" "$(median wrk-rss-hyper)"
    printf '%-38s %8s req/s   RSS %s MiB\n' "wrk wiremock-rs" "$w" "$(median wrk-rss-wiremock)"
    printf '%-38s %8s req/s   RSS %s MiB   %sx wiremock-rs (target >= 1), %sx bare hyper (target >= 0.5)\n' \
        "wrk HTTP mock, recording on" "$m" "$(median wrk-rss-mock)" "$(ratio "$m" "$w")" "$(ratio "$m" "$h")"
fi
if want long && [ -s "$work/series-long-rate" ]; then
    printf '%-38s %s req/s per segment; RSS %s MiB\n' "long run, $long requests" \
        "$(paste -sd' ' "$work/series-long-rate")" "$(paste -sd' ' "$work/series-long-rss")"
fi
if want judging && [ -s "$work/judging" ]; then
    printf '%-38s %s   (target <= 2000 ms)\n' "judging $JUDGE_MESSAGES client messages" \
        "$(awk '/^judging median:/ {print $3, $4}' "$work/judging")"
fi
if want hostile; then
    for kind in stdio http; do
        [ -s "$work/hostile-$kind" ] && printf '%-38s %s   (target: peak < 64 MiB + 16 MiB cap, delivered=yes)\n' "hostile $kind" "$(cat "$work/hostile-$kind")"
    done
fi
