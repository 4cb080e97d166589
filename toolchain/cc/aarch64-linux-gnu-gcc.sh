#!/bin/sh
# The compiler and linker of the aarch64 C++ toolchain (BUILD): Debian's cross gcc. Without it,
# say in one line which package to install instead of failing on a missing file.
if ! command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  echo "rules_torch_export: C++ for //platforms:linux_aarch64 needs Debian's g++-aarch64-linux-gnu, which is not installed; run: apt-get install g++-aarch64-linux-gnu (./bazelw does it as root)" >&2
  exit 1
fi
exec aarch64-linux-gnu-gcc "$@"
