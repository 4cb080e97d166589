"""Writes app_archive's .tar.gz: a binary's runfiles tree as regular files, plus the binary's name
at the top as a symlink into it, so that `./NAME` runs from wherever the archive is unpacked.

    app_archive.py MANIFEST.json OUT.tar.gz

MANIFEST.json: {"entry": [name, its target in the archive], "files": [[archive path, file], ...]}.
The bytes depend on the files alone: names sorted, owner root, mtime 0, modes 0755 or 0644.
"""

import gzip
import io
import json
import os
import sys
import tarfile


def _info(name, size=0, executable=False):
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.uid, info.gid, info.uname, info.gname = size, 0, 0, 0, "root", "root"
    info.mode = 0o755 if executable else 0o644
    return info


def main(argv):
    manifest, out = argv
    with open(manifest, encoding="utf-8") as f:
        spec = json.load(f)
    files = sorted(spec["files"])
    folders = sorted({"/".join(path.split("/")[:i]) for path, _ in files for i in range(1, path.count("/") + 1)})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for folder in folders:
            info = _info(folder, executable=True)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for path, source in files:
            with open(source, "rb") as f:
                data = f.read()
            tar.addfile(_info(path, len(data), os.access(source, os.X_OK)), io.BytesIO(data))
        name, target = spec["entry"]
        link = _info(name, executable=True)
        link.type, link.linkname = tarfile.SYMTYPE, target
        tar.addfile(link)
    with open(out, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as z:
            z.write(buffer.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
