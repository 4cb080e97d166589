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
# The aarch64 wheel of the locked ExecuTorch, whose native runtime C++ for //platforms:linux_aarch64
# links, pinned by its sha256 (executorch_aarch64.bzl fetches it; the wheel's platform and Python
# are the ones it names).
version="$(sed -n 's/^executorch==//p' "$here/requirements.lock")"
wheel_platform="$(sed -n 's/^WHEEL_PLATFORM = "\(.*\)"$/\1/p' "$here/executorch_aarch64.bzl")"
wheel_python="$(sed -n 's/^WHEEL_PYTHON = "\(.*\)"$/\1/p' "$here/executorch_aarch64.bzl")"
"$scratch/venv/bin/pip" download -q --no-deps --only-binary=:all: --platform "$wheel_platform" \
  --python-version "$wheel_python" --dest "$scratch/aarch64" "executorch==$version"
digest="$(sha256sum "$scratch"/aarch64/*.whl | cut -d' ' -f1)"
pin="$here/executorch_aarch64.lock"
{ grep '^#' "$pin"; echo "executorch==$version --hash=sha256:$digest"; } > "$pin.new"
mv "$pin.new" "$pin"
echo "wrote $here/requirements.lock and $pin"
