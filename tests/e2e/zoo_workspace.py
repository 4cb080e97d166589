"""Puts the e2e tests' tiny model zoo (tests/e2e/zoo) into a harness workspace as //zoo."""

import os
import shutil

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo")

# The zoo's tokenizer is the main repository's (data of :zoo_workspace).
TOKENIZER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(ZOO))), "models", "llm", "tokenizer.json")

EXPORTS = ["//zoo:cache_chunk_ep", "//zoo:cache_row_ep", "//zoo:conv_ep", "//zoo:gate_ep", "//zoo:lm_pte_ep",
           "//zoo:mlp_ep"]
PROGRAMS = ["//zoo:cache_pte", "//zoo:conv_pte", "//zoo:conv_q8_pte", "//zoo:gate_pte", "//zoo:lm_pte",
            "//zoo:mlp_external_pte", "//zoo:mlp_pte"]

# How many actions of each exporter mnemonic a clean build of the zoo runs.
ACTIONS = {"TorchExport": 6, "CalibrationData": 1, "TorchQuantize": 1, "ExecuTorchLower": 7, "TokenizerCheck": 1}

# The files of the //zoo:app bundle: index.json, one per program, one .ptd and one tokenizer.
BUNDLE_FILES = 1 + len(PROGRAMS) + 2

# Every file the zoo's programs and bundle produce, relative to the workspace.
OUTPUTS = [
    f"bazel-bin/zoo/{name}{suffix}"
    for name in ("cache_chunk_ep", "cache_row_ep", "conv_ep", "conv_q8_ep", "gate_ep", "lm_pte_ep", "mlp_ep")
    for suffix in (".pt2", ".pt2.json")
] + [
    f"bazel-bin/zoo/{name}{suffix}"
    for name in ("cache_pte", "conv_pte", "conv_q8_pte", "gate_pte", "lm_pte", "mlp_external_pte", "mlp_pte")
    for suffix in (".pte", ".pte.json")
] + [
    "bazel-bin/zoo/lm_tokenizer.tokenizer.json",
    "bazel-bin/zoo/mlp_external_pte.ptd",
    "bazel-bin/zoo/signal_calibration.calib.pt",
    "bazel-bin/zoo/signal_calibration.calib.json",
]


def install(ws):
    """Copies the zoo into ws/zoo (BUILD.zoo becomes BUILD), its checkpoint conv.pt included.

    conv.pt is a file of the zoo, not made here: making it (torch.manual_seed(1), then
    torch.save(Conv().state_dict())) imported torch into every test process, about 3.5 s of
    CPU that only the inner builds need. To make it again, in tests/e2e: `from zoo.conv import
    Conv; torch.manual_seed(1); buffer = io.BytesIO(); torch.save(Conv().state_dict(), buffer)`,
    then write buffer's bytes to zoo/conv.pt (saved to a path, torch names the zip's folder after
    the file, "conv/", not "archive/", and the bytes differ)."""
    for dirpath, dirnames, filenames in os.walk(ZOO):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = os.path.relpath(dirpath, ZOO)
        for name in filenames:
            target = os.path.join(ws.path, "zoo", rel, "BUILD" if name == "BUILD.zoo" else name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(dirpath, name), target)
    shutil.copyfile(TOKENIZER, os.path.join(ws.path, "zoo", "tokenizer.json"))


def bundle_files(ws):
    """Workspace-relative paths of the files in the //zoo:app bundle folder."""
    folder = os.path.join(ws.path, "bazel-bin", "zoo", "app")
    return sorted(f"bazel-bin/zoo/app/{name}" for name in os.listdir(folder))
