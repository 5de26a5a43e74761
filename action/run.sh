#!/usr/bin/env bash
# The action's run step (action.yml): builds the mcp-harness command line from the inputs
# (INPUT_* variables), runs it, and hands the result on: `exit-code`, `reports` and
# `artifact` to $GITHUB_OUTPUT, the run's summary.md to $GITHUB_STEP_SUMMARY. It exits 0
# whatever the harness said, so the upload step still runs; the action's last step fails
# the job on a non-zero exit code. MCP_HARNESS names the binary (default: mcp-harness on
# PATH). harness/tests/harness/action.rs runs this script.
set -uo pipefail
harness="${MCP_HARNESS:-mcp-harness}"
reports="${INPUT_REPORTS:-mcp-harness-reports}"
artifact="${INPUT_ARTIFACT_NAME:-mcp-harness-report}"
output() { echo "$1" >> "${GITHUB_OUTPUT:-/dev/null}"; }
fail() {
  echo "::error::$1"
  output "exit-code=2"
  exit 0
}
flag() {
  case "${1:-false}" in
    true) return 0 ;;
    false | "") return 1 ;;
    *) fail "the $2 input is \"$1\": write true or false" ;;
  esac
}

command -v "$harness" >/dev/null ||
  fail "$harness is not on PATH: leave the install input at npm, or install it before this step (npm install -g mcp-harness, or pip install mcp-transport-harness) and set install: none"

if [ -n "${INPUT_MERGE:-}" ]; then
  # Globs in the input are meant: `shards/*` is every downloaded shard's folder.
  # shellcheck disable=SC2206
  shards=($INPUT_MERGE)
  args=(merge "${shards[@]}")
else
  [ -n "${INPUT_COMMAND:-}" ] ||
    fail "the command input is empty: give the command line that starts your client's driver (the cmd target contract, clients/README.md), or merge: for a merge job"
  mode=cmd
  if flag "${INPUT_PERSISTENT:-}" persistent; then mode=cmd+persistent; fi
  args=(run)
  # shellcheck disable=SC2206
  [ -z "${INPUT_SCENARIOS:-}" ] || args+=($INPUT_SCENARIOS)
  args+=(--target "$mode:$INPUT_COMMAND")
  [ -z "${INPUT_TAGS:-}" ] || args+=(--tag "$INPUT_TAGS")
  [ -z "${INPUT_FILTER:-}" ] || args+=(--filter "$INPUT_FILTER")
  [ -z "${INPUT_TRANSPORT:-}" ] || args+=(--transport "$INPUT_TRANSPORT")
  [ -z "${INPUT_REVISION:-}" ] || args+=(--revision "$INPUT_REVISION")
  [ -z "${INPUT_JOBS:-}" ] || args+=(-j "$INPUT_JOBS")
  if flag "${INPUT_STRICT:-}" strict; then args+=(--strict); fi
  if [ -n "${INPUT_PARTITION:-}" ]; then
    args+=(--partition "$INPUT_PARTITION")
    artifact="$artifact-shard-${INPUT_PARTITION/\//-of-}"
  fi
fi
args+=(--reports "$reports" --quiet)
[ -z "${INPUT_BASELINE:-}" ] || args+=(--expected-failures "$INPUT_BASELINE")

echo "$harness ${args[*]}"
CI=true "$harness" "${args[@]}"
code=$?
output "exit-code=$code"
output "reports=$reports"
output "artifact=$artifact"
if [ -f "$reports/summary.md" ]; then
  {
    echo "### mcp-harness${INPUT_PARTITION:+ (shard $INPUT_PARTITION)}"
    echo
    cat "$reports/summary.md"
  } >> "${GITHUB_STEP_SUMMARY:-/dev/null}"
fi
case "$code" in
  0) ;;
  1) echo "::error::mcp-harness: unexpected results (a failure the baseline does not list, or a listed one that now passes): see the job summary" ;;
  *) echo "::error::mcp-harness could not run (exit $code): see the message above" ;;
esac
exit 0
