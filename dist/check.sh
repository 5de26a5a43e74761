#!/usr/bin/env bash
# `make dist-check`: installs the packages `make dist` wrote into DIST_DIR the way a user
# would, offline, each into a fresh place, and runs the embedded library's quick pass
# (`--tag '!slow'`) against the reference client (clients/reference/, Python standard
# library only) through the installed command:
#
#   npm:  a fresh project, `npm install --offline <launcher.tgz> <platform.tgz>`,
#         then node_modules/.bin/mcp-harness and mcp-mock;
#   pip:  a fresh venv, `pip install --no-index <wheel>`, then venv/bin/mcp-harness and mcp-mock.
#
# Every command runs under `env -i` with a PATH that has node, npm and python3 but no Rust
# toolchain (checked), and a HOME of its own (so the embedded library is written out afresh).
# Fails on an install error, a non-zero exit or a quick pass without its summary line;
# prints the time from the install to the summary line for each. Last, the GitHub Action's
# install step (action/install.sh) installs the same tarballs and puts the command on PATH.
set -euo pipefail
dist="${1:?usage: dist/check.sh DIST_DIR (the folder make dist wrote)}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
dist="$(cd "$dist" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# node and python3 from where they are, nothing else that is not in /usr/bin:/bin.
path=/usr/bin:/bin
for tool in node python3; do
  found="$(PATH=/usr/bin:/bin command -v "$tool" || command -v "$tool" || true)"
  [ -n "$found" ] || { echo "dist-check: $tool is not installed; the packages' check needs it" >&2; exit 2; }
  dir="$(dirname "$found")"
  case ":$path:" in *":$dir:"*) ;; *) path="$path:$dir" ;; esac
done
if env -i PATH="$path" sh -c 'command -v cargo || command -v rustc' >/dev/null; then
  echo "dist-check: a Rust toolchain is on the PATH the check uses ($path): the check is that none is needed" >&2
  exit 2
fi

launcher=("$dist"/mcp-harness-[0-9]*.tgz)
platform=("$dist"/mcp-harness-linux-*.tgz "$dist"/mcp-harness-darwin-*.tgz)
wheel=("$dist"/mcp_transport_harness-*.whl)
for f in "${launcher[0]}" "${wheel[0]}"; do
  [ -f "$f" ] || { echo "dist-check: $f is missing: run make dist (or make dist DIST_PROFILE=debug) first" >&2; exit 2; }
done
platform=($(ls "${platform[@]}" 2>/dev/null || true))
[ ${#platform[@]} -gt 0 ] || { echo "dist-check: no platform package (mcp-harness-<platform>-*.tgz) in $dist" >&2; exit 2; }

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# quick_pass LABEL HOME BIN_DIR: the installed mcp-mock answers, then the quick pass.
quick_pass() {
  local label="$1" home="$2" bin="$3"
  env -i PATH="$path" HOME="$home" "$bin/mcp-mock" --version
  env -i PATH="$path" HOME="$home" "$bin/mcp-harness" run --tag '!slow' \
    --target "cmd:$repo/clients/reference/run" --reports "$tmp/$label-reports" --quiet | tee "$tmp/$label.log"
  grep -Eq '^[0-9]+ passed, 0 failed' "$tmp/$label.log" ||
    { echo "dist-check: $label: the quick pass printed no '<n> passed, 0 failed' line" >&2; exit 1; }
}

echo "== npm: ${launcher[0]##*/} + ${platform[*]##*/}"
mkdir -p "$tmp/npm-project" "$tmp/npm-home"
cd "$tmp/npm-project"
echo '{"name": "dist-check", "private": true}' > package.json
start="$(now)"
env -i PATH="$path" HOME="$tmp/npm-home" npm install --offline --no-audit --no-fund --no-update-notifier \
  --loglevel=error "${launcher[0]}" "${platform[@]}"
quick_pass npm "$tmp/npm-home" "$tmp/npm-project/node_modules/.bin"
npm_time="$(seconds "$start" "$(now)")"

echo "== pip: ${wheel[0]##*/}"
mkdir -p "$tmp/pip-home"
env -i PATH="$path" HOME="$tmp/pip-home" python3 -m venv "$tmp/venv"
start="$(now)"
env -i PATH="$path" HOME="$tmp/pip-home" "$tmp/venv/bin/pip" install --no-index --no-cache-dir --quiet \
  --disable-pip-version-check "${wheel[0]}"
quick_pass pip "$tmp/pip-home" "$tmp/venv/bin"
pip_time="$(seconds "$start" "$(now)")"

echo "== the GitHub Action's install step (action/install.sh) with the same tarballs"
mkdir -p "$tmp/runner"
env -i PATH="$path" HOME="$tmp/npm-home" RUNNER_TEMP="$tmp/runner" GITHUB_PATH="$tmp/runner/path" \
  npm_config_offline=true INPUT_PACKAGE="${launcher[0]} ${platform[*]}" bash "$repo/action/install.sh"
[ "$(cat "$tmp/runner/path")" = "$tmp/runner/mcp-harness/node_modules/.bin" ] ||
  { echo "dist-check: action/install.sh put $(cat "$tmp/runner/path") on the job's PATH" >&2; exit 1; }

echo "dist-check: npm install to summary line ${npm_time} s; pip install to summary line ${pip_time} s"
