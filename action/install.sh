#!/usr/bin/env bash
# The action's install step (action.yml): installs the npm package `mcp-harness` (a launcher
# plus the platform package that holds the binaries; `make dist` builds both) into a folder
# of the runner's own, and puts its bin/ on the job's PATH. INPUT_PACKAGE, when set, is any
# npm package specs instead, space-separated (the two tarballs `make dist` writes);
# dist/check.sh installs them through this script.
set -euo pipefail
spec="${INPUT_PACKAGE:-}"
[ -n "$spec" ] || spec="mcp-harness@${INPUT_VERSION:?the version input is empty: give a version of the npm package mcp-harness}"
prefix="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-harness"
mkdir -p "$prefix"
# npm installs the optional platform package that matches this runner; none matching is
# said by the launcher itself on its first run.
# Several specs are allowed (the launcher's and the platform package's tarballs).
# shellcheck disable=SC2086
npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error $spec
echo "$prefix/node_modules/.bin" >> "${GITHUB_PATH:-/dev/null}"
"$prefix/node_modules/.bin/mcp-harness" --version
