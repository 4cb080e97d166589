"""Downstream of //zoo:mlp_pte: checks that the file is an ExecuTorch program."""

import os
import sys

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_pte.pte")
with open(path, "rb") as f:
    header = f.read(8)
# A .pte is a flatbuffer whose file identifier, at bytes 4..8, starts with "ET".
sys.exit(0 if header[4:6] == b"ET" else 1)
