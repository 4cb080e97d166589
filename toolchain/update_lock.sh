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
# examples/own_lock pins the rules' lock plus einops (tests/consumer_e2e/own_lock_test checks it).
own="$here/../examples/own_lock/requirements.lock"
{
  grep '^#' "$own"
  { grep -v '^#' "$here/requirements.lock"; grep '^einops==' "$own"; } | LC_ALL=C sort -f
} > "$own.new"
mv "$own.new" "$own"
echo "wrote $here/requirements.lock"
