"""The arm64 app, unpacked from its archive into an empty folder and run under qemu, picks the
keyword the host's build of the same app picks, with its score within 1e-3."""

import os
import re
import struct
import subprocess
import tarfile
import tempfile

SRCDIR = os.path.join(os.environ["TEST_SRCDIR"], "consumer", "keywords")


def _clip(folder, seed):
    """A clip of 40 x 100 float32 values, written where the app can read it."""
    values = [((i * 7919 + seed * 104729) % 2003) / 1001.0 - 1.0 for i in range(40 * 100)]
    path = os.path.join(folder, f"clip{seed}.f32")
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{len(values)}f", *values))
    return path


def _keyword(stdout):
    keyword, score = re.fullmatch(r"keyword (\d+) \(score (\S+)\)\n", stdout).groups()
    return int(keyword), float(score)


def test_the_unpacked_arm64_app_runs_from_an_empty_folder_and_agrees_with_the_host_app():
    with tempfile.TemporaryDirectory() as folder:
        app = os.path.join(folder, "app")
        with tarfile.open(os.path.join(SRCDIR, "keyword_spotter_arm64_app.tar.gz")) as tar:
            tar.extractall(app)
        assert os.path.islink(os.path.join(app, "keyword_spotter"))
        for seed in range(3):
            clip = _clip(folder, seed)
            # No Bazel variables: the app finds its libraries and its .pte inside the archive.
            arm64 = subprocess.run(["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", "./keyword_spotter", clip],
                                   cwd=app, capture_output=True, text=True, env={})
            assert arm64.returncode == 0, arm64.stderr
            host = subprocess.run([os.path.join(SRCDIR, "keyword_spotter"), clip], capture_output=True, text=True)
            assert host.returncode == 0, host.stderr
            (arm64_keyword, arm64_score), (host_keyword, host_score) = _keyword(arm64.stdout), _keyword(host.stdout)
            assert arm64_keyword == host_keyword and abs(arm64_score - host_score) < 1e-3, (arm64.stdout, host.stdout)


if __name__ == "__main__":
    import sys

    import pytest

    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
