"""backend_latency: benchmarks that compare one export's programs across backends, for
docs/backends.md's table ("Latency per backend").

    executorch_program(name = "resnet_one_image_xnnpack", backends = ["xnnpack"],
                       exported = ":resnet_one_image_ep", tags = ["manual"])
    backend_latency(name = "resnet_latency", programs = [":resnet_one_image_xnnpack", ":resnet_openvino"])

declares an executorch_benchmark `<program>.benchmark` for each program, and `<name>`, a group of
them (`bazel build :resnet_latency` builds them all). `bazel run` each: every
one times the method in ExecuTorch's Python runtime, the one runtime that runs every backend
here, so their p50s compare. They are manual, so `//...` builds none of them, nor a manual
program they time.
"""

load("//rules:defs.bzl", "executorch_benchmark")

def backend_latency(name, programs, method = "forward"):
    """A manual executorch_benchmark `<program>.benchmark` of each program, grouped as `name`.

    Args:
      name: the group of the benchmarks (a manual filegroup).
      programs: labels in this package of programs lowered from one export for several backends.
      method: the method to time: a dict {program: method} where they differ (a multi-method
        program's "decode" beside a one-method program's "forward"), or one name for all.
    """
    for program in programs:
        executorch_benchmark(
            name = program.lstrip(":") + ".benchmark",
            method = method.get(program, "forward") if type(method) == "dict" else method,
            program = program,
            tags = ["manual"],
        )
    native.filegroup(name = name, srcs = [program + ".benchmark" for program in programs], tags = ["manual"])
