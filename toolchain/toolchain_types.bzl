"""The toolchain type's label, in a file of its own so that loading it loads no rule code."""

# A string, because Bazel 4.2.3's rule(toolchains = ...) takes no Label objects. str(Label())
# resolves it in this repository, also when rules_torch_export is an external repository.
TORCH_EXPORT_TOOLCHAIN_TYPE = str(Label("//toolchain:toolchain_type"))
