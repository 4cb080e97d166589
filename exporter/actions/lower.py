"""The ExecuTorchLower action: .pt2 -> .pte and its manifest. It never re-exports."""

import contextlib
import dataclasses
import json
import os

import torch

from exporter.core import atomic, buffers, kernels, lowering_errors, manifest, phases
from exporter.formats import program_summary
from exporter.actions import delegates, llm, registry, selected_ops, sharing
from exporter.core import backend_site, releases, shape_spec
from exporter.core.backends import BACKENDS, record
from exporter.formats import pt2
from exporter.core.errors import BadFile, Context, UserError

# The tag ExecuTorch names the weights file after. Fixed, so that the .ptd's and the .pte's bytes
# do not depend on the target's name; the action renames <tag>.ptd to <name>.ptd.
WEIGHTS_TAG = "weights"


def _move_delegate_weights_out(edge):
    """Puts every delegate's named data (XNNPACK's weights) in the WEIGHTS_TAG data file.

    XNNPACK moves a weight out only when its placeholder carries meta["custom"]
    ["delegate_constant_tag"], but it folds batch norm into convolutions while it lowers, and
    the folded weights are new placeholders without the tag: they would stay in the .pte. So
    the exporter moves the lowered program's named data instead. ExecuTorch 1.4.1 and 1.5.1 keep it in
    EdgeProgramManager._named_data_store (pte_data, external_data by file tag).
    """
    store = edge._named_data_store
    store.external_data.setdefault(WEIGHTS_TAG, {}).update(store.pte_data)
    store.pte_data.clear()


@contextlib.contextmanager
def lowering_context():
    """How ExecuTorch must re-trace a loaded program (the lowering, and checks/divergence.py's taps).

    Re-tracing a loaded program runs torch's fake convolution, which picks an ATen CPU backend
    by the traced batch size and so narrows the batch range (NNPACK: batch < 16, oneDNN:
    batch > 1). ExecuTorch never uses those backends; without them the dims keep the ranges
    that torch.export recorded. Seen with torch 2.13 + ExecuTorch 1.4.1. No autograd either: a
    loaded program's parameters require grad, and re-tracing an in-place write to a buffer (a
    KV cache) then fails ("a leaf Variable that requires grad is being used in an in-place
    operation"). And two savings that leave the bytes as they are (below): no stack traces
    captured, and provenance shared rather than deep-copied.
    """
    with torch.backends.mkldnn.flags(enabled=False), torch.backends.nnpack.flags(enabled=False), \
            torch.no_grad(), no_stack_trace_capture(), shared_provenance():
        yield


@contextlib.contextmanager
def no_stack_trace_capture():
    """Re-traces without capturing a Python stack trace for each node torch creates.

    A loaded program's nodes have no stack trace (formats/pt2.py removes them), so every
    re-trace (run_decompositions, three per XNNPACK method) captures a new one for each node,
    and keeps only the frames of a module's forward: the program runs in an FX interpreter, which
    has none, so the kept trace is empty and the node gets none. Capturing them took about 7 % of
    a lowering's time (measured 2026-11-27 on gru_pte and tiny_lm_q8_pte), for the same bytes.
    Stack traces a node has already (a program lowered while still in memory) are kept.
    """
    import torch.fx.config

    before = torch.fx.config.do_not_emit_stack_traces
    torch.fx.config.do_not_emit_stack_traces = True
    try:
        yield
    finally:
        torch.fx.config.do_not_emit_stack_traces = before


def _same(node_source, memo):
    return node_source


@contextlib.contextmanager
def shared_provenance():
    """Copies of a node's provenance share its NodeSource records instead of copying them deeply.

    torch records where each node came from (meta["from_node"]: a NodeSource, whose from_node
    lists the NodeSources before it), and every pass that re-creates a node deep-copies its
    whole chain, which grows by one at each of ExecuTorch's and XNNPACK's many passes: up to a
    tenth of a lowering's time (measured 2026-11-27 on mobilenet_q8_pte and tiny_lm_q8_pte).
    Neither torch nor ExecuTorch changes a NodeSource once made (they make new ones, and append
    to a node's own list, which stays a copy), so sharing them gives the same records, the same
    debug handles, and the same bytes. Left as is if torch ever defines its own __deepcopy__.
    """
    from torch.fx.traceback import NodeSource

    if "__deepcopy__" in vars(NodeSource):
        yield
        return
    NodeSource.__deepcopy__ = _same
    try:
        yield
    finally:
        del NodeSource.__deepcopy__


def lower(programs, backends, constant_methods=None, external_weights=False, initialized_buffers=None,
          label="?", generate_etrecord=False, foundation=None, backend_options=None):
    """Lowers ExportedPrograms ({method name: program}, or one for "forward"); returns
    (ExecuTorch's ExecutorchProgramManager, {buffer name: record} of the mutated buffers).

    backends is one list for every method, or {method name: list} (ExecuTorch takes a
    partitioner list per method).

    With external_weights, every weight goes to the tensor data file WEIGHTS_TAG
    (write_tensor_data_to_file). initialized_buffers lists the mutated buffers whose initial
    value the program keeps; None keeps every one (core/buffers.py says why).
    generate_etrecord keeps ExecuTorch's ETRecord (get_etrecord()); the program's bytes stay
    the same. With a foundation (actions/sharing.py's Foundation), every tensor but the
    program's own goes to the shared data file SHARED_TAG, which sharing.verify checks.
    """
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    if foundation is not None:
        sharing.tag_own(programs if isinstance(programs, dict) else {"forward": programs})
    used = sorted({b for listed in backends.values() for b in listed}) if isinstance(backends, dict) else backends
    with lowering_context(), delegates.backend_patches(used, backend_options), \
            phases.running(phases.LOWERING, backends=", ".join(used) or "portable"):
        partitioner = ({name: delegates.partitioners(b, backend_options) for name, b in backends.items()}
                       if isinstance(backends, dict) else delegates.partitioners(backends, backend_options))
        edge = to_edge_transform_and_lower(programs, partitioner=partitioner,
                                           constant_methods=constant_methods or None,
                                           generate_etrecord=generate_etrecord)
        state = buffers.mark_initialized(edge, initialized_buffers, label)
        options: dict = {}
        if state:
            # Names in the .pte (tools and apps read them), and one copy of each buffer that
            # every method reads and writes, as the eager module has.
            options["emit_mutable_buffer_names"] = True
            if len(edge.methods) > 1:
                options["memory_planning_pass"] = MemoryPlanningPass(share_mutable_buffers=True)
        if external_weights:
            _move_delegate_weights_out(edge)
            # The constants outside delegates (the portable kernels' weights) follow the same tag.
            options["external_constants"] = lambda node: WEIGHTS_TAG
        if foundation is not None:
            sharing.split_named_data(edge, foundation)
            options["external_constants"] = sharing.constant_tags(edge)
        return edge.to_executorch(ExecutorchBackendConfig(**options) if options else None), state


def methods_record(program):
    """Per method (constant methods too): its inputs, operators (outside delegates), delegates
    with their payload sizes, and planned memory. program is ExecuTorch's own Program
    (to_executorch's, or deserialize_pte_binary's)."""
    return {
        name: {key: record[key] for key in ("inputs", "operators", "delegates", "planned_memory")}
        for name, record in program_summary.methods(program).items()
    }


def input_schema(methods):
    """What each method takes, from its shape spec, as JSON text: input names (paths for
    nested inputs), dtypes and shapes, and each dim's declared min and max. The runtime checks
    only an input's element count against its bound; an app can check this before a call."""
    schema = {}
    for name, method in sorted(methods.items()):
        spec = method.spec or {"inputs": [], "dims": {}}
        inputs = []
        for entry in spec["inputs"]:  # named as forward's parameter, then the path inside it
            prefix = f"inputs[{shape_spec.key_text(entry['name'])}]"
            for path, t in shape_spec.walk_tensors({"inputs": [entry]}):
                inputs.append({"name": str(entry["name"]) + path[len(prefix):], "dtype": t["dtype"], "shape": t["shape"]})
        schema[name] = {
            "inputs": inputs,
            "dims": {d: {"min": v.get("min"), "max": v.get("max")} for d, v in sorted(spec.get("dims", {}).items())},
        }
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def _write_weights(et_program, path):
    """Writes the program's weights file to path; returns its manifest record."""
    import tempfile

    with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as folder:
        et_program.write_tensor_data_to_file(folder)
        written = os.listdir(folder)
        if written != [WEIGHTS_TAG + ".ptd"]:  # a program without weights writes none
            raise UserError(f"the program has no weights to put in a .ptd (ExecuTorch wrote "
                            f"{sorted(written)}); set weights = \"inline\"")
        atomic.commit(os.path.join(folder, written[0]), path)
    return manifest.file_record(path)


def _load(method, context):
    try:
        ep = pt2.load(method.pt2)
    except pt2.UnregisteredOperators as e:
        raise UserError(lowering_errors.unresolved_message(pt2.unresolved_operators(method.pt2), context)) from e
    except BadFile:
        raise  # one line naming the file (corrupt, or refused: it could run code)
    except Exception as e:
        raise UserError(f"cannot load {os.path.basename(method.pt2)}: {e}") from e
    unbounded = lowering_errors.unbounded_sizes(ep, method.spec)
    if unbounded:
        raise UserError(lowering_errors.unbounded_message(unbounded, context))
    return ep


def lowered(config, generate_etrecord=False):
    """(ExecuTorch's ExecutorchProgramManager, constant methods, mutated buffers' records, the
    manifest's "foundation" record or None, the loaded ExportedPrograms by method) for a
    LowerConfig."""
    backend_site.activate(config.backend_packages)
    contexts = {
        name: Context(config.label, exported=(m.exported_label,), spec_label=m.spec_label, spec=m.spec,
                      export=m.export, backends=tuple(config.backends_of(name)))
        for name, m in config.methods.items()
    }
    programs = {name: _load(m, contexts[name]) for name, m in config.methods.items()}
    constants = dict(config.metadata, input_schema=input_schema(config.methods))
    if config.llm:
        constants.update(llm.constants(config, programs))
    if config.multimodal:
        from exporter.actions import multimodal

        constants.update(multimodal.constants(config, programs))
    clash = sorted(set(constants) & set(programs))
    if clash:  # ExecuTorch would keep both under one name, and the constant would be unreachable
        raise UserError(f"executorch_program {config.label}: metadata {clash[0]!r} has the name of a "
                        f"method; rename it")
    foundation = sharing.load(config.foundation.index, config.label) if config.foundation else None
    delegates.check_quantized(programs, {name: config.backends_of(name) for name in programs}, config.backend_options,
                              lambda name: f"executorch_program {config.label}: method {name}'s export "
                                           f"{config.methods[name].exported_label}")
    try:
        backends = ({name: list(b) for name, b in config.method_backends.items()} if config.method_backends
                    else list(config.backends))
        et_program, state = lower(programs, backends, constants, config.weights == "external",
                                  config.initialized_buffers, config.label, generate_etrecord, foundation,
                                  config.backend_options)
    except UserError:
        raise
    except Exception as e:
        for name, ep in programs.items():
            reason = buffers.diagnose(ep, name, contexts[name]) or lowering_errors.diagnose(ep, e)
            if reason:
                raise UserError(f"ExecuTorch lowering of {contexts[name].exported_text} failed: {reason}") from e
        # The failure is the whole program's: the message names every method's export.
        context = dataclasses.replace(next(iter(contexts.values())),
                                      exported=tuple(m.exported_label for m in config.methods.values()))
        raise UserError(lowering_errors.explain(e, context)) from e
    if config.llm:
        llm.check_context(config, programs["forward"])
    if config.multimodal:
        multimodal.check_context(config, programs["text_decoder"])
    shared = sharing.verify(et_program, programs, foundation, config.label) if foundation else None
    return et_program, constants, state, shared, programs


def warm_up():
    """A persistent worker's warm-up: a tiny lowering for the default backends, and what their
    hooks build ahead (XNNPACK's pattern graphs, which that lowering does not need:
    backend_hooks/xnnpack_patterns.py). A portable lowering after it costs no more than a warm one, so
    one will do."""
    from exporter.actions import export

    export.warm_up(lambda ep: lower(ep, list(registry.DEFAULT_BACKENDS)))
    for name in registry.DEFAULT_BACKENDS:
        warm = getattr(delegates.hooks(name), "warm_up", None)
        if warm:
            warm()


def run(config):
    """Runs the action for a LowerConfig."""
    # What the backends' hooks keep of the lowering goes in the manifest, which the budget test
    # and the report read, and in their own outputs (Vela's figures, for one).
    backend_site.activate(config.backend_packages)  # the backends' packages, before their hooks import them
    used = used_backends(config)
    with delegates.recording(used) as found:
        et_program, constants, state, shared, programs = lowered(config)
    kernels.check(config.kernels, et_program)  # before any output exists
    exported = {name: {"label": m.exported_label, "pt2_sha256": manifest.sha256_file(m.pt2)}
                for name, m in config.methods.items()}
    pte, manifest_path = config.outputs["pte"], config.outputs["manifest"]
    atomic.write_bytes(pte, et_program.buffer)
    if "selected_ops" in config.outputs:
        selected_ops.write(pte, config.label, config.outputs["selected_ops"])
    weights = {"ptd": _write_weights(et_program, config.outputs["ptd"])} if config.weights == "external" else {}
    if shared:  # the foundation's .ptd is the one the app loads with this program
        weights = {"ptd": shared["ptd"], "foundation": shared}
    manifest.write_json(manifest_path, {
        "format": "rules_torch_export/pte-manifest/1",
        "label": config.label,
        "exported": exported["forward"] if "forward" in exported else next(iter(exported.values())),
        "backends": list(config.backends),
        **({"method_backends": {name: list(b) for name, b in config.method_backends.items()}}
           if config.method_backends else {}),
        "pte": manifest.file_record(pte),
        "inputs": manifest.inputs_record(kernels.settings(config.raw)),
        "methods": methods_record(et_program.executorch_program),
        "constant_methods": constants,
        **(llm.manifest_record(config) if config.llm else {}),
        **weights,
        **({"method_programs": exported} if len(exported) > 1 else {}),
        **({"mutable_buffers": state} if state else {}),
        **backend_record(config, et_program.buffer),
        **delegates.manifest_records(used, found),
        "toolchain": manifest.toolchain_record(config.identity),
        **({"executorch_release": releases.manifest_record(config.release)} if config.release else {}),
    })
    delegates.write_outputs(used, found, config.outputs, config.label)
    if "summary" in config.outputs:
        from exporter.formats import pte_inspect

        manifest.write_json(config.outputs["summary"], pte_inspect.summarize(pte))
    if "graph" in config.outputs:  # last: the outputs above never depend on it
        _write_graph(config, et_program, programs)


def used_backends(config):
    """Every backend any method of the program is lowered for, in BACKENDS' order."""
    listed = {b for name in config.methods for b in config.backends_of(name)} | set(config.backends)
    return [b for b in BACKENDS if b in listed]


def backend_record(config, pte):
    """The manifest's record of the backends with packages beyond ExecuTorch's: each one's options
    and the versions of its packages, and for a backend whose blob is compiled for this machine's
    CPU, what it is compiled for (docs/caching.md, "Per-machine programs"). {} for other programs,
    so that their manifests keep their bytes."""
    used = [name for name in used_backends(config) if record(name).packages]
    if not used:
        return {}
    given = config.backend_options
    found = {name: {"options": dataclasses.asdict(getattr(given, name)) if given and getattr(given, name) else {},
                    "packages": backend_site.versions(record(name).packages)} for name in used}
    for name in used:
        if record(name).per_machine:
            found[name]["per_machine"] = delegates.hooks(name).per_machine_record(pte)
    return {"backend_packages": found}


def _write_graph(config, et_program, programs):
    """What the program's report draws (actions/program_graph.py), read while the lowering is in
    memory: the .pte keeps no shapes or module paths inside its delegates."""
    from exporter.actions import program_graph

    record = program_graph.record(et_program, programs, {n: m.spec for n, m in config.methods.items()}, config.label)
    atomic.write_bytes(config.outputs["graph"], (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode())
