"""The one exception the exporter turns into a one-line build error, and what its messages name."""

import dataclasses
from typing import Any


class UserError(Exception):
    """A problem the user fixes in a BUILD file or in model code, stated in their terms.

    The message says what is wrong and what to change; the CLI prefixes the target label.
    """


class BadFile(UserError, ValueError):
    """A file its reader refuses: truncated, corrupt, foreign, or holding what must not be
    loaded (a pickle that could run code). One line that names the file and what is wrong;
    every reader of build outputs raises it instead of whatever its parser happened to hit.
    A ValueError too, which the test runners' one-line path (checks.contract.main) catches.
    """


@dataclasses.dataclass(frozen=True)
class Context:
    """What an error message names: the target being built and the targets and settings behind it.

    label       the target being built (a torch_export, an executorch_program, ...)
    model       the torch_model's label (an export's errors)
    exported    the torch_export labels a program is lowered from, one per method in error
    spec_label, spec   the shape_spec's label and JSON (core/shape_spec.py)
    export      the torch_export's options (actions.registry.ExportOptions): the fixes a message
                may offer are those it does not have already
    backends    the executorch_program's backends
    """

    label: str
    model: str | None = None
    exported: tuple[str, ...] = ()
    spec_label: str | None = None
    spec: dict | None = None
    export: Any = None
    backends: tuple[str, ...] = ()

    @property
    def exported_text(self):
        """'//pkg:a_ep' or '//pkg:a_ep, //pkg:b_ep'."""
        return ", ".join(self.exported)

    @property
    def backend_text(self):
        return ", ".join(self.backends) or "portable"

    @property
    def spec_text(self):
        return self.spec_label or "its shape_spec"

    @property
    def strict(self):
        return bool(self.export and self.export.strict)


# Every change that the explanations of a failed export or lowering (export_errors.py,
# lowering_errors.py, buffers.diagnose) may suggest. exporter/actions/fixes_test.py holds a
# failing model for each, applies the change, and checks that the build gets past the error: a
# suggestion that no test applies is not made.
SUGGESTIONS = {
    "shape_spec_edit": "torch's suggested fixes, as the shape_spec edits they amount to",
    "static_size": "write the size a dynamic axis specialised to as an int",
    "bound_data_dependent": "bound a data-dependent value with torch._check, or branch with torch.cond",
    "strict_false": "export non-strict, past a TorchDynamo graph break",
    "strict_true": "export strict, so that TorchDynamo finds the buffer behind a tensor written in place",
    "write_registered_buffer": "write in place to a registered buffer, not to a tensor reached otherwise",
    "buffer_final_size": "register a buffer at its final size instead of resizing it",
    "separate_buffer": "make a mutated buffer a tensor of its own instead of a view of another",
    "decompose_custom_op": "export a Python custom op's decomposition (decompose, ir)",
    "unroll_control_flow": "unroll a while_loop that ExecuTorch cannot run",
    "portable_backend": "lower for the portable runtime (backends = [])",
    "one_dynamic_size": "keep one dynamic size per input for XNNPACK",
    "dim_max": "give a dynamic size a max",
    "real_tensors": "compute with real tensors instead of complex ones",
    "register_output_class": "register a forward's output class with torch.export.register_dataclass",
}


def fix(kind, text):
    """text, a suggested change of kind `kind` (a key of SUGGESTIONS)."""
    if kind not in SUGGESTIONS:
        raise KeyError(f"suggestion {kind!r} is not in errors.SUGGESTIONS; add it there and to fixes_test.py")
    return text
