#!/usr/bin/env bash
# Installs the third-party SDK drivers that mcp-harness runs as cmd: targets.
#
#   clients/install.sh [typescript|typescript-v2|python|rmcp|all]...   (default: all)
#
# Idempotent and fast when already installed: each part keeps a stamp of the inputs it was
# installed from (lock file, requirements, Cargo.lock + sources) and does nothing while they
# are unchanged. Only the ordinary package registries are used (npm, PyPI, crates.io).
#
# Environment: PYTHON (default python3), NPM (default npm), CARGO (default cargo),
# MCP_RMCP_TARGET_DIR (default clients/rmcp/target).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
PYTHON="${PYTHON:-python3}"
NPM="${NPM:-npm}"
CARGO="${CARGO:-cargo}"

INSTALL_SCRIPT=install.sh
# shellcheck source=install_stamp.sh
source "$here/install_stamp.sh"

install_node_driver() { # folder node-major
  local dir="$here/$1" stamp="$here/$1/node_modules/.mcp-harness-stamp"
  command -v node >/dev/null || die "node is not installed (Node.js $2+ is needed for the $1 driver)"
  local d; d="$(digest "$dir/package.json" "$dir/package-lock.json")"
  if up_to_date "$stamp" "$d"; then say "$1: up to date"; return; fi
  say "$1: npm ci"
  (cd "$dir" && "$NPM" ci --no-audit --no-fund --loglevel=error)
  echo "$d" > "$stamp"
}

install_typescript() { install_node_driver typescript 18; }
install_typescript_v2() { install_node_driver typescript-v2 20; }

install_python_venv() { # name requirements-file
  local venv="$here/python/.venv-$1" req="$here/python/$2" stamp="$here/python/.venv-$1/.mcp-harness-stamp"
  local d; d="$(digest "$req")"
  if up_to_date "$stamp" "$d"; then say "python-$1: up to date"; return; fi
  say "python-$1: creating $venv from $2"
  "$PYTHON" -m venv "$venv" || die "cannot create a venv with $PYTHON (on Debian: apt-get install python3-venv)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$d" > "$stamp"
}

install_python() {
  command -v "$PYTHON" >/dev/null || die "$PYTHON is not installed (Python 3.10+ is needed for the Python driver)"
  install_python_venv v2 requirements-v2.txt
  install_python_venv v1 requirements-v1.txt
}

rmcp_target_dir() {
  if [[ -n "${MCP_RMCP_TARGET_DIR:-}" ]]; then echo "$MCP_RMCP_TARGET_DIR";
  else echo "$here/rmcp/target"; fi
}

install_rmcp() {
  local dir="$here/rmcp" target; target="$(rmcp_target_dir)"
  local stamp="$target/.mcp-harness-stamp" bin="$target/release/mcp-driver-rmcp"
  # The driver builds the plan type from scenario-model: a change there rebuilds it too.
  local d; d="$(digest "$dir/Cargo.toml" "$dir/Cargo.lock" "$dir"/src/*.rs "$here/../Cargo.toml" "$here/../scenario-model/Cargo.toml" "$here/../scenario-model/src"/*.rs)"
  if [[ -x "$bin" ]] && up_to_date "$stamp" "$d"; then say "rmcp: up to date"; return; fi
  command -v "$CARGO" >/dev/null || die "$CARGO is not installed (a Rust toolchain with edition 2024 support, 1.85+, is needed for the rmcp driver)"
  say "rmcp: cargo build --release (target dir $target; the first build takes a few minutes)"
  CARGO_TARGET_DIR="$target" "$CARGO" build --release --locked --quiet --manifest-path "$dir/Cargo.toml"
  mkdir -p "$target" && echo "$d" > "$stamp"
}

parts=("$@")
[[ ${#parts[@]} -eq 0 ]] && parts=(all)
for part in "${parts[@]}"; do
  case "$part" in
    typescript) install_typescript ;;
    typescript-v2) install_typescript_v2 ;;
    python) install_python ;;
    rmcp) install_rmcp ;;
    all) install_typescript; install_typescript_v2; install_python; install_rmcp ;;
    *) die "unknown part '$part': use typescript, typescript-v2, python, rmcp or all" ;;
  esac
done
