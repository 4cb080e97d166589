"""The one exception the exporter turns into a one-line build error, and what its messages name."""

import dataclasses


class UserError(Exception):
    """A problem the user fixes in a BUILD file or in model code, stated in their terms.

    The message says what is wrong and what to change; the CLI prefixes the target label.
    """


@dataclasses.dataclass(frozen=True)
class Context:
    """What an error message names: the target being built and the targets and settings behind it.

    label       the target being built (a torch_export, an executorch_program, ...)
    model       the torch_model's label (an export's errors)
    exported    the torch_export labels a program is lowered from, one per method in error
    spec_label, spec   the shape_spec's label and JSON (core/shape_spec.py)
    export      the torch_export's options (actions.configs.ExportOptions): the fixes a message
                may offer are those it does not have already
    backends    the executorch_program's backends
    """

    label: str
    model: str = None
    exported: tuple = ()
    spec_label: str = None
    spec: dict = None
    export: object = None
    backends: tuple = ()

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
