"""Serves REAPI on 127.0.0.1 for --config=rbe-local, until Ctrl-C.

    bazel run //tests/remote_e2e:local_executor            # port 8980, as .bazelrc expects
    bazel build --config=rbe-local //models/...            # in another shell

It makes (or reuses) the image venv at /opt/rules_torch_export, fetches buildbox-casd and
buildbox-run once, and keeps the executor's CAS and action cache in --cache_dir between runs.
"""

import argparse
import os
import signal
import sys

from tests.remote_e2e import buildbox_executor, image_venv


def _identity_note(image):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", "")
    committed = os.path.join(workspace, "toolchain", "remote", "image_identity.txt")
    if workspace and os.path.exists(committed):
        with open(committed, encoding="utf-8") as f:
            if f.read() == image.identity:
                return ""
    return (
        "\nNote: toolchain/remote/image_identity.txt does not name this image; cache keys would "
        "name another environment. Record it first:\n"
        f"  cp {image.identity_path} toolchain/remote/image_identity.txt\n"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8980)
    parser.add_argument(
        "--cache_dir",
        default=os.path.join(os.path.dirname(buildbox_executor.cache_dir()), "local_executor"),
        help="where the executor keeps its CAS and action cache",
    )
    args = parser.parse_args(argv)
    image = image_venv.ensure()
    executor = buildbox_executor.BuildboxExecutor(args.cache_dir, mounts=image.mounts)
    executor.port = args.port
    executor.start()
    print(
        f"buildbox-casd serves {executor.url} (pid {executor.process.pid}); actions see "
        f"{', '.join(image.mounts)} read-only, no network.\n"
        "Build with:  bazel build --config=rbe-local //models/...\n"
        f"Logs: {os.path.join(executor.prefix, 'casd.log')}. Ctrl-C stops it."
        + _identity_note(image),
        flush=True,
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        executor.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        executor.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
