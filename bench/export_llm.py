"""These rules' 4-bit language models against ExecuTorch's own LLM recipe, export_llm from the
wheel, in one run and in the same runner (docs/llm.md, "ExecuTorch's LLM operators"):

    ./bazelw run //bench:export_llm

export_llm builds its own Llama (examples/models/llama) of //models/llm:hf_llama's shape (tiny_lm's
width, depth, heads and vocabulary, with 2 key-value heads) with its defaults for speed: 8da4w,
int4 tables, the custom SDPA over its KV cache, XNNPACK. Ours: tiny_lm_llm_4bit_emb, and
transformers' Llama of that shape (hf_llama) with and without llm_ops. Every program then
generates greedily from the same prompt in ExecuTorch's TextLLMRunner, interleaved in one process
(the first round warms up): prefill tokens per second, the time to the first token, decode tokens
per second (medians), then each program alone in a fresh process for its peak RSS. It prints each
of ours against export_llm's as ratios (ours / theirs), and how many tokens each generated (the
prompt is one after which every program generates all NEW_TOKENS, so decode is timed over the
same positions; an end token would cut a program's decode short).

It then prints each program's instructions per prefill and decode call, counted by callgrind in
//native:et_runner_llm_ops (bench/llm_instructions.py; `--instructions RUNNER CALLGRIND`).

    ./bazelw run //bench:export_llm_1b    (manual: about 14 GiB free needed, docs/performance.md)

does the same for //models/llm:hf_llama_1b's Llama-3.2-1B shape (`--shape 1b`): our program with
llm_ops, weights in a .ptd, against export_llm's Llama of that shape (its weights in the .pte),
instructions included (5 to 8 minutes of callgrind per program).
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# (The bench once used "The runner reads the cache": hf_llama ends it after 10 new tokens, export_llm's
# Llama after 23, and the decode figures compared different positions.)
PROMPT = "Once upon a time"
ROUNDS, NEW_TOKENS = 41, 24
# export_llm's params.json of each shape and the programs' max_seq_len (= max_context_len).
SHAPES = {
    # //models/llm:hf_llama's (LlamaConfig's defaults for the rest): tiny_lm_runner's width, depth,
    # heads, MLP and vocabulary (models/llm/runner_lm.py), with 2 key-value heads.
    "hf_llama": ({"dim": 128, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 96, "hidden_dim": 512,
                  "norm_eps": 1e-06, "rope_theta": 10000.0, "use_scaled_rope": False}, 32),
    # //models/llm:hf_llama_1b's: Llama 3.2 1B's (its llama3 rope scaling is export_llm's use_scaled_rope).
    "1b": ({"dim": 2048, "n_layers": 16, "n_heads": 32, "n_kv_heads": 8, "vocab_size": 128256, "hidden_dim": 8192,
            "norm_eps": 1e-05, "rope_theta": 500000.0, "use_scaled_rope": True}, 64),
}


def recipe(shape, folder):
    """export_llm's params.json and --config for a shape, writing into folder."""
    params, max_seq_len = SHAPES[shape]
    return params, {  # JSON is YAML, which export_llm's --config reads
        "base": {"model_class": "llama3", "params": os.path.join(folder, "params.json"),
                 "metadata": json.dumps({"get_bos_id": 0, "get_eos_ids": [1]})},
        "model": {"use_kv_cache": True, "use_sdpa_with_kv_cache": True, "enable_dynamic_shape": True},
        "backend": {"xnnpack": {"enabled": True}},
        "quantization": {"qmode": "8da4w", "group_size": 32, "embedding_quantize": "4,32"},
        "export": {"max_seq_length": max_seq_len, "max_context_length": max_seq_len, "output_dir": folder,
                   "output_name": os.path.join(folder, "export_llm.pte")},  # a bare name is the cwd's
    }


def run_export_llm(shape, folder):
    """Runs export_llm into folder; its .pte and the seconds it took."""
    params, config = os.path.join(folder, "params.json"), os.path.join(folder, "config.yaml")
    for path, value in zip((params, config), recipe(shape, folder)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "executorch.extension.llm.export.export_llm", "--config", config],
                   check=True, capture_output=True, cwd=folder)  # hydra writes its outputs/ into the cwd
    return os.path.join(folder, "export_llm.pte"), time.perf_counter() - start


def _import_runtime():
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (export_llm's llama:: kernels)
    import executorch.kernels.quantized  # noqa: F401
    from executorch.extension.llm.runner import TextLLMRunner

    return TextLLMRunner


def _runner(files, tokenizer):
    """A TextLLMRunner of a program's (.pte, .ptd or None)."""
    return _import_runtime()(*files[:1], tokenizer, *[f for f in files[1:] if f])


def _generate(runner):
    """(prompt tokens per second, seconds to the first token, decode tokens per second, new tokens)."""
    from executorch.extension.llm.runner import GenerationConfig

    settings = GenerationConfig()
    settings.max_new_tokens, settings.temperature, settings.echo = NEW_TOKENS, 0.0, False
    times, stats = [], []
    start = time.perf_counter()
    runner.generate(PROMPT, settings, token_callback=lambda _: times.append(time.perf_counter()),
                    stats_callback=stats.append)
    runner.reset()
    first = times[0] - start
    return stats[0].num_prompt_tokens / first, first, (len(times) - 1) / (times[-1] - times[0]), len(times)


def _measure(programs, tokenizer):
    """{name: [(prefill, first token, decode, new tokens) per round]}, the programs interleaved."""
    runners = {name: _runner(files, tokenizer) for name, files in programs.items()}
    rounds = {name: [] for name in programs}
    for round_ in range(ROUNDS):
        for name, runner in runners.items():
            figures = _generate(runner)
            if round_:
                rounds[name].append(figures)
    return rounds


def _peak_rss(files, tokenizer):
    """(peak RSS, what loading and running the program added to it) in bytes, of a fresh process
    that imports the runtime, then loads the program and generates once."""
    code = ("import sys; from bench.export_llm import _generate, _import_runtime, _runner, _status; _import_runtime(); "
            "before = _status('VmHWM'); _generate(_runner(sys.argv[2:], sys.argv[1])); "
            "print(_status('VmHWM'), _status('VmHWM') - before)")
    done = subprocess.run([sys.executable, "-c", code, tokenizer, *[f for f in files if f]], check=True,
                          capture_output=True, text=True)
    return tuple(int(n) for n in done.stdout.split()[-2:])


def _status(field):
    """A /proc/self/status figure, in bytes."""
    with open("/proc/self/status", encoding="utf-8") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _print(programs, rounds, tokenizer):
    rows = {}
    for name, files in programs.items():
        prefill, first, decode, _ = (statistics.median(column) for column in zip(*rounds[name]))
        peak, added = _peak_rss(files, tokenizer)
        size = sum(os.path.getsize(f) for f in files if f)
        rows[name] = (prefill, first * 1000, decode, size, added)
        print(f"{name}: prefill {prefill:,.0f} tok/s, first token {first * 1000:.2f} ms, decode {decode:,.0f} "
              f"tok/s over {min(r[3] for r in rounds[name])} to {max(r[3] for r in rounds[name])} new tokens, "
              f"{'.pte and .ptd' if files[1] else '.pte'} {size:,} B, peak RSS {peak / 2**20:.0f} MiB, "
              f"{added / 2**20:.1f} MiB of it the program's")
    theirs = rows.pop("export_llm")
    labels = ("prefill", "first token", "decode", "size", "the program's peak RSS")
    for name, ours in rows.items():
        print(f"{name} / export_llm's: " + ", ".join(f"{label} {a / b:.2f}" for label, a, b in zip(labels, ours, theirs)))


def _print_instructions(runner, callgrind, programs):
    """Each program's instructions per prefill and decode call (bench/llm_instructions.py)."""
    from bench import llm_instructions

    found = llm_instructions.figures(callgrind, runner, programs)
    print("\ninstructions per call under callgrind, one thread:\n" + "\n".join(llm_instructions.table(found)))


def program_files(args):
    """{//pkg:name: (.pte, its .ptd or None)} of the programs' runfiles paths (each program's files,
    e.g. bench/hf_llama_4bit_emb.pte and models/llm/hf_llama_1b_llm.ptd; other files are skipped)."""
    found = {}
    for pte in (arg for arg in args if arg.endswith(".pte")):
        folder, name = os.path.split(pte[:-len(".pte")])
        ptd = next((arg for arg in args if arg == pte[:-len(".pte")] + ".ptd"), None)
        found[f"//{folder}:{name}"] = (pte, ptd)
    return found


def main():
    shape = sys.argv[2] if sys.argv[1] == "--shape" else "hf_llama"
    ours, tokenizer = program_files(sys.argv[1:-1]), sys.argv[-1]  # the programs' files, then the tokenizer
    with tempfile.TemporaryDirectory() as folder:
        theirs, seconds = run_export_llm(shape, folder)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # its process, the only child yet
        print(f"export_llm ({shape}'s shape): {seconds:.0f} s, peak RSS {peak:.2f} GiB")
        everything = dict(ours, export_llm=(theirs, None))
        _print(everything, _measure(everything, tokenizer), tokenizer)
        if "--instructions" in sys.argv:  # the runner and callgrind follow it
            at = sys.argv.index("--instructions")
            _print_instructions(sys.argv[at + 1], sys.argv[at + 2], everything)
    print(f"this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
