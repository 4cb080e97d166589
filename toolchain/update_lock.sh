#!/usr/bin/env bash
# Resolves toolchain/requirements.in into toolchain/requirements.lock in a scratch venv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q -r "$here/requirements.in"
{
  sed -n '1,/^# torch is/p' "$here/requirements.lock"
  "$scratch/venv/bin/pip" freeze --exclude pip | LC_ALL=C sort -f
} > "$here/requirements.lock.new"
mv "$here/requirements.lock.new" "$here/requirements.lock"
echo "wrote $here/requirements.lock"
