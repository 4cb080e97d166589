"""Instructions per call of language-model programs in one native runner, counted by callgrind as
the InstructionCount action counts (exporter/actions/instructions.py: one thread, the main
thread's dumps, exact run to run): a prompt's prefill, then a decode call at two positions
(docs/performance.md, "ExecuTorch's LLM operators against export_llm").

Each program gets the same calls, in order, on one loaded program: PROMPT_TOKENS tokens from
position 0, then one token at each position of DECODE_AT. Its input_pos is what its forward
declares, as ExecuTorch's TextLLMRunner passes it: the tokens' positions ([seq], these rules') or
the start alone ([1], export_llm's).

    ./bazelw test //bench:export_llm_instructions_test   (nightly tier: it runs export_llm)

builds export_llm's program of //models/llm:hf_llama's shape (bench/export_llm.py), counts it and
these rules' Llama of that shape with and without llm_ops in //native:et_runner_llm_ops, prints
the table and fails when a gated program decodes in more instructions, or is larger, than the
program it is gated against (GATES). `./bazelw run //bench:export_llm` prints the same table.
"""

import os
import sys
import tempfile

import numpy as np

from bench import export_llm
from exporter.actions import instructions
from exporter.formats import program_summary, pte_inspect, value_file

PROMPT_TOKENS = 8
DECODE_AT = (1, 24)
PREFILL = f"prefill of {PROMPT_TOKENS}"
DECODES = tuple(f"decode at {position}" for position in DECODE_AT)
# (ours, what it must match or beat on every decode call and on .pte bytes)
GATES = (
    ("//bench:hf_llama_4bit_emb_sdpa", "export_llm"),
    ("//bench:hf_llama_4bit_emb_sdpa", "//bench:hf_llama_4bit_emb"),
)


def _start_only(pte):
    """Whether the program's forward takes its start position alone (input_pos [1])."""
    program = pte_inspect.read_program(pte_inspect.read_file(pte))
    plan = next(p for p in program.execution_plan if p.name == "forward")
    return program_summary.method_record(program, plan)["inputs"][1]["sizes"] == [1]


def _calls(pte):
    """[(phase, tokens, input_pos)] of the calls every program gets."""
    prompt = list(range(PROMPT_TOKENS))
    prefill = (PREFILL, [token + 3 for token in prompt], prompt[:1] if _start_only(pte) else prompt)
    return [prefill] + [(phase, [5], [position]) for phase, position in zip(DECODES, DECODE_AT)]


def per_call(callgrind, runner, pte, ptd=None):
    """{phase: instructions} of one run of the runner under callgrind over _calls(pte), its weights
    in ptd if it has them."""
    calls = _calls(pte)
    with tempfile.TemporaryDirectory() as folder:
        arguments = []
        for number, (_, tokens, positions) in enumerate(calls):
            path = os.path.join(folder, f"{number}.etvals")
            value_file.write(path, [value_file.Tensor("int64", np.array(v, dtype=np.int64)) for v in ([tokens], positions)])
            arguments.append(f"forward={path}")
        dumps, _ = instructions.callgrind_dumps(callgrind, runner, pte, arguments, pte, ptd)
    counted = [total for name, total in dumps.get(1, []) if name == "call forward"]
    if len(counted) != len(calls):  # a runner built without valgrind's client requests marks none
        raise SystemExit(f"{pte}: the runner marked {len(counted)} calls for callgrind, not {len(calls)}")
    return dict(zip((phase for phase, _, _ in calls), counted))


def figures(callgrind, runner, programs):
    """{name: {phase: instructions, "bytes": .pte and .ptd bytes}} of {name: (.pte, its .ptd or None)}."""
    return {name: dict(per_call(callgrind, runner, *files), bytes=sum(os.path.getsize(f) for f in files if f))
            for name, files in programs.items()}


def table(found, reference="export_llm"):
    """Markdown lines: each program's figures, then each of the others against reference's."""
    columns = (PREFILL, *DECODES, "bytes")
    lines = ["| program | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    lines += [f"| `{name}` | " + " | ".join(f"{row[c]:,}" for c in columns) + " |" for name, row in found.items()]
    lines += [f"| {name} / {reference} | " + " | ".join(f"{row[c] / found[reference][c]:.3f}" for c in columns) + " |"
              for name, row in found.items() if name != reference and reference in found]
    return lines


def failures(found, gates=GATES):
    """One line for each gated figure where ours is above what it is gated against."""
    return [f"{ours}: {figure} {found[ours][figure]:,} > {theirs}'s {found[theirs][figure]:,}"
            for ours, theirs in gates for figure in (*DECODES, "bytes") if found[ours][figure] > found[theirs][figure]]


def main(argv):
    """argv: the runner, callgrind, then the programs' runfiles (export_llm.program_files)."""
    runner, callgrind = argv[:2]
    programs = export_llm.program_files(argv[2:])
    with tempfile.TemporaryDirectory() as folder:
        programs["export_llm"] = (export_llm.run_export_llm("hf_llama", folder)[0], None)
        found = figures(callgrind, runner, programs)
    print("\n".join(table(found)))
    failed = failures(found)
    print("\n".join(failed) or f"every gate holds: {', '.join(f'{a} <= {b}' for a, b in GATES)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
