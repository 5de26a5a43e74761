# Sourced by the install scripts (clients/install.sh, conformance/install.sh): their messages
# and their stamps. An install keeps a stamp, the digest of the files it was installed from,
# and does nothing while they are unchanged, which makes it idempotent and fast when installed.
#
# The sourcing script sets INSTALL_SCRIPT, the name its messages begin with.

say() { printf '%s: %s\n' "$INSTALL_SCRIPT" "$*" >&2; }
die() { say "$*"; exit 1; }

# A digest of the files an install depends on; the install is redone when it changes.
digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

up_to_date() { # stamp-file digest
  [[ -f "$1" && "$(cat "$1")" == "$2" ]]
}
