"""ExecuTorch's native runtime as its wheels ship it, for the BUILD files that the venv repository
(x86-64, from the venv) and the aarch64 repository (from the pinned aarch64 wheel) generate."""

load(":locked_venv.bzl", "run_or_fail")

# The shared libraries under executorch/lib that the generated targets link.
NATIVE_LIBRARIES = [
    "executorch",
    "executorch_threadpool",
    "executorch_kernels_optimized",
    "executorch_kernels_quantized",
    "executorch_backend_xnnpack",
    "executorch_etdump",
]

# The headers and what compiling against them takes: the vendored c10 headers are included as
# <c10/...>; C10_USING_CUSTOM_GENERATED_MACROS stands for a header only a PyTorch build makes;
# the libraries were built with the event tracer (its classes change layout without it) and the
# thread pool, as the wheel's share/cmake/executorch-config.cmake says. Every C++ target that
# includes them also needs copts = ["-std=c++17"] (EXECUTORCH_COPTS in @rules_torch_export//rules:defs.bzl):
# Bazel 4.2.3 compiles with -std=c++0x, and copts do not pass through deps.
_HEADERS = """
cc_library(
    name = "{name}",
    hdrs = glob(["include/executorch/**/*.h"]),
    includes = ["include", "include/executorch/runtime/core/portable_type/c10"],
    defines = ["C10_USING_CUSTOM_GENERATED_MACROS", "ET_EVENT_TRACER_ENABLED", "ET_USE_THREADPOOL"],
)
"""

# Prints {soname: real path} of a Python binding and of every shared library it needs that sits in a
# folder its RUNPATH names (with $ORIGIN resolved from the real file), or in the running venv's
# torch/lib, transitively; and the interpreter's libpython. The system's libraries are not listed.
_SHARED_CLOSURE = """
import importlib.util, json, os, re, subprocess, sys, sysconfig
start = sys.argv[1]
torch_lib = os.path.join(importlib.util.find_spec("torch").submodule_search_locations[0], "lib")
found, todo = {os.path.basename(start): os.path.realpath(start)}, [start]
while todo:
    path = todo.pop()
    text = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    origin = os.path.dirname(os.path.realpath(path))
    folders = [d.replace("$ORIGIN", origin) for r in re.findall(r"\\((?:RUNPATH|RPATH)\\).*\\[(.*)\\]", text) for d in r.split(":")]
    for name in re.findall(r"\\(NEEDED\\).*\\[(.*)\\]", text):
        for folder in [] if name in found else folders + [torch_lib]:
            if os.path.exists(os.path.join(folder, name)):
                found[name] = os.path.realpath(os.path.join(folder, name))
                todo.append(found[name])
                break
if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
    sys.exit("the interpreter " + sys.executable + " has no shared libpython, which the binding needs")
name = sysconfig.get_config_var("INSTSONAME")
found[name] = os.path.realpath(os.path.join(sysconfig.get_config_var("LIBDIR"), name))
print(json.dumps(found, sort_keys=True))
"""

def link_closure(rctx, python, start, folder, what, skip = []):
    """Links a shared library and every one it needs that is not the system's into folder.

    Args:
      rctx: the repository context.
      python: the interpreter whose torch and libpython the library loads.
      start: the path of the library.
      folder: where the links go, side by side ($ORIGIN in their RUNPATHs names this folder).
      what: the library, for the message of a failure.
      skip: sonames to leave out (those another target links already).

    Returns:
      The sorted sonames linked.
    """
    found = json.decode(run_or_fail(rctx, [python, "-I", "-c", _SHARED_CLOSURE, str(start)], "finding the libraries of " + what))
    names = sorted([name for name in found.keys() if name not in skip])
    for name in names:
        rctx.symlink(found[name], folder + "/" + name)
    return names

# A cc_library of shared libraries linked side by side into one folder (link_closure's).
_SHARED_LIBRARIES = """
[cc_import(
    name = "{prefix}" + str(index),
    shared_library = "{folder}/" + name,
) for index, name in enumerate({names})]

cc_library(
    name = "{name}",
    deps = {deps} + [":{prefix}" + str(index) for index in range({count})],{compatible}
)
"""

def shared_libraries_build(name, folder, names, deps, prefix, compatible_with = None):
    """BUILD text: cc_library `name` of deps and the libraries `names` in `folder`, each a cc_import.

    Args:
      name: the library's name.
      folder: the folder the libraries are in (link_closure's).
      names: their file names.
      deps: labels the library also depends on.
      prefix: the cc_imports' names, before their index.
      compatible_with: the library's target_compatible_with, or None.
    """
    compatible = "\n    target_compatible_with = {},".format(repr(compatible_with)) if compatible_with else ""
    return _SHARED_LIBRARIES.format(name = name, folder = folder, names = repr(names), deps = repr(deps), prefix = prefix, count = len(names), compatible = compatible)

def native_headers_build(name = "headers"):
    """The cc_library of a wheel's executorch/include, as BUILD text."""
    return _HEADERS.format(name = name)
