"""The zoo's checkpoint folders are what make_hf_checkpoints.py writes, so the script is their
source. The script is deterministic."""

import os

from runfiles import Runfiles

from models.hf import make_hf_checkpoints

RUNFILES = Runfiles.Create()


def test_writing_again_gives_the_checked_in_folders(tmp_path):
    make_hf_checkpoints.write(str(tmp_path))
    for folder in sorted(make_hf_checkpoints.FOLDERS):
        names = sorted(os.listdir(tmp_path / folder))
        assert names == ["config.json", "model.safetensors"]
        for name in names:
            with open(RUNFILES.Rlocation(f"rules_torch_export/models/hf/{folder}/{name}"), "rb") as f:
                assert (tmp_path / folder / name).read_bytes() == f.read(), \
                    f"run models/hf/make_hf_checkpoints.py models/hf: {folder}/{name}"
