"""Models that read files their targets never declared, for the hermeticity tests.

//zoo_undeclared:ep's model imports a helper of its package that its srcs leave out;
//zoo_undeclared:ckpt_ep's model reads a file of its checkpoint folder that its glob leaves out.
Both must fail in one line, the same line with the worker as in the sandbox.
"""

BUILD = """
load("//rules:defs.bzl", "dim", "shape_spec", "tensor", "torch_export", "torch_model")

torch_model(
    name = "m",
    srcs = [
        "__init__.py",
        "m.py",{helper}
    ],
    entry = "zoo_undeclared.m:M",
)

torch_model(
    name = "ckpt",
    srcs = [
        "__init__.py",
        "ckpt.py",
    ],
    checkpoint_dir = glob(["weights/config.json"]),
    entry = "zoo_undeclared.ckpt:Ckpt",
)

shape_spec(
    name = "vec",
    dims = {{"batch": dim(max = 4)}},
    inputs = {{"x": tensor(["batch", 4])}},
)

torch_export(
    name = "ep",
    model = ":m",
    shapes = ":vec",
)

torch_export(
    name = "ckpt_ep",
    model = ":ckpt",
    shapes = ":vec",
)
"""

FILES = {
    "m.py": (
        "import torch\n\nfrom zoo_undeclared.helper import SCALE\n\n\n"
        "class M(torch.nn.Module):\n    def forward(self, x):\n        return x * SCALE\n"
    ),
    "helper.py": "SCALE = 2.0\n",
    "ckpt.py": (
        "import json\nimport os\n\nimport torch\n\n\n"
        "class Ckpt(torch.nn.Module):\n"
        "    def __init__(self, checkpoint_dir):\n        super().__init__()\n"
        "        with open(os.path.join(checkpoint_dir, 'config.json')) as f:\n"
        "            self.scale = json.load(f)['scale']\n"
        "        with open(os.path.join(checkpoint_dir, 'extra.json')) as f:\n"
        "            self.shift = json.load(f)['shift']\n\n"
        "    def forward(self, x):\n        return x * self.scale + self.shift\n"
    ),
    "weights/config.json": '{"scale": 2.0}\n',
    "weights/extra.json": '{"shift": 1.0}\n',
    "__init__.py": "",
}


def install(ws, declare_helper=False):
    """Writes //zoo_undeclared into the workspace, with helper.py in srcs or not."""
    ws.write("zoo_undeclared/BUILD", BUILD.format(helper='\n        "helper.py",' if declare_helper else ""))
    for name, text in FILES.items():
        ws.write(f"zoo_undeclared/{name}", text)
