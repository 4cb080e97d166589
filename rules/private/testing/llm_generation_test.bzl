"""llm_generation_test: an llm_program generates the eager model's tokens in ExecuTorch's LLM
runner and in the native runner (exporter/checks/generation.py)."""

load("//rules:providers.bzl", "ExecuTorchProgramInfo", "ExecuTorchReleaseInfo", "TokenizerInfo")
load("//rules/private:arm64_binary.bzl", "ARM64_RUNNER_ATTRS", "arm64_runner_config")
load("//rules/private:backends.bzl", "check_backend_runtimes", "package_identities")
load("//rules/private:executorch_benchmark.bzl", "NATIVE_RUNNER_ATTRS")
load("//rules/private/lib:config_entries.bzl", "model_config", "runner_program_config")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load("//rules/private/lib:llm_ops_runtimes.bzl", "LLM_OPS_RUNNER_ATTRS", "check_llm_ops_runtimes", "native_runner_of")
load("//rules/private/lib:releases.bzl", "RELEASE_ATTRS", "check_arm64_release", "check_test_release", "release_runtime_config", "release_test_attrs")
load(":config_test.bzl", "config_target_attrs", "config_test_attrs", "config_test_rule", "test_prefix", "write_test_config")

# Where a generation runs: ExecuTorch's LLM runner (TextLLMRunner, through its Python bindings)
# and the native runner.
_RUNTIMES = ["python", "native"]

def _generation_test_impl(ctx):
    where = test_prefix("llm_generation_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    tokenizer = ctx.attr.tokenizer[TokenizerInfo]
    prompts = ctx.attr.prompts + ctx.attr.eos_prompts
    if not prompts or [p for p in prompts if not p]:
        fail(where + "prompts must be a non-empty list of non-empty strings, e.g. [\"The runner\"] (with eos_prompts)")
    if ctx.attr.max_new_tokens < 1:
        fail(where + "max_new_tokens = {} is too small; use at least 1".format(ctx.attr.max_new_tokens))
    if "forward" not in program.methods:
        fail(where + "{} has no method forward; give an llm_program".format(program.label))
    runtimes = ctx.attr.runtimes
    if not runtimes or [r for r in runtimes if r not in _RUNTIMES]:
        fail(where + "runtimes = {} names no runtime or an unknown one; use {} or a part of it".format(runtimes, _RUNTIMES))
    check_backend_runtimes(where, runtimes + (["arm64"] if ctx.attr.arm64 else []), program.backends)
    release = check_test_release(where, program, ctx.attr.release_name, ctx.attr.any_release_order)
    check_arm64_release(where, release, ctx.attr.arm64)
    check_llm_ops_runtimes(where, program, ctx.attr.arm64_runner[0].label if ctx.attr.arm64_runner else None)
    native_runner = native_runner_of(program, ctx.attr.native_runner, ctx.attr._llm_ops_runner)
    model, model_files = model_config(program.methods["forward"].model, runfiles = True)
    config, files = runner_program_config(ctx.attr.test_label, program, tokenizer)
    release_entries, release_files = release_runtime_config(ctx, program, release)
    config.update(release_entries)
    files = files + release_files
    runtime_release = ctx.attr.release[ExecuTorchReleaseInfo] if ctx.attr.release else None
    if runtime_release and runtime_release.runtime_python:  # 1.3's: forward runs in its runtimes' venv
        config["runtime_python"] = runtime_release.runtime_python.short_path
        files = files + [runtime_release.runtime_python, runtime_release.runtime_identity]
    config.update(
        model = model,
        prompts = ctx.attr.prompts,
        max_new_tokens = ctx.attr.max_new_tokens,
        native_runner = native_runner[DefaultInfo].files_to_run.executable.short_path if "native" in runtimes else None,
        native_runner_label = str(native_runner.label),
    )
    if ctx.attr.eos_prompts:  # only then: other tests' configs keep their bytes
        config["eos_prompts"] = ctx.attr.eos_prompts
    options = program.methods["forward"].options
    if options.get("quantize") or options.get("embedding_quantize"):  # likewise: the eager model is quantized as the export's
        config["quantized"] = {key: options[key] for key in ("quantize", "group_size", "embedding_quantize") if options.get(key)}
    if program.backend_packages:  # e.g. a backend's runtime library, for ExecuTorch's LLM runner
        config["backend_packages"] = [f.short_path for f in package_identities(program.backend_packages)]
        files = files + program.backend_packages
    runners = native_runner[DefaultInfo].default_runfiles if "native" in runtimes else ctx.runfiles()
    if ctx.attr.arm64_runner:
        runners = runners.merge(arm64_runner_config(ctx, config))
    return write_test_config(ctx, config, files, transitive_files = model_files, runfiles = runners)

_generation_test = config_test_rule(
    implementation = _generation_test_impl,
    doc = "The rule behind llm_generation_test: it checks the attributes and writes the JSON config that exporter/checks/generation.py reads and the launcher that runs it.",
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The llm_program."),
        "tokenizer": attr.label(mandatory = True, providers = [TokenizerInfo], doc = "Its tokenizer."),
        "prompts": attr.string_list(doc = "The prompts."),
        "eos_prompts": attr.string_list(doc = "Prompts whose text must end at an end id before max_new_tokens."),
        "max_new_tokens": attr.int(default = 16, doc = "Tokens to generate per prompt."),
        "runtimes": attr.string_list(default = _RUNTIMES, doc = "Where it generates: \"python\" (ExecuTorch's LLM runner), \"native\" (the native runner), or both."),
        "arm64": attr.bool(doc = "Also generate in the native runner built for arm64 (arm64_runner, which the macro sets when the release has one)."),
    }, NATIVE_RUNNER_ATTRS, LLM_OPS_RUNNER_ATTRS, ARM64_RUNNER_ATTRS, RELEASE_ATTRS),
)

def llm_generation_test(name, program, tokenizer, prompts, max_new_tokens = 16, eos_prompts = [], runtimes = None, native_runner = None, arm64 = False, release = None, **kwargs):
    """Generates greedily in ExecuTorch's runners and compares the tokens with the eager model's.

    Each prompt runs in ExecuTorch's LLM runner and in the native runner, token for token
    against the model's own generation, its stop included (a program exported with quantize or
    embedding_quantize: against its eager model quantized the same way). The LLM runner is
    ExecuTorch's TextLLMRunner (its C++ runner, through Python bindings), given the .pte and the tokenizer file
    as an app gives them; the native runner is //native:et_runner --generate. In 1.3's runtimes,
    whose venv has another torch, the Python side is 1.3.1's Python runtime in that venv, its
    forward called token by token as the runner calls it (1.3.1's LLM runner reads a tokenizer.json
    otherwise: docs/compatibility.md). The model's side
    is transformers' generate() for an hf_model (greedy, stopping at its generation config's end
    ids), else the eager model called as the runner calls the program, stopping at the tokenizer's
    end ids. The test prints each prompt's continuation and tokens per second (docs/llm.md).

        llm_generation_test(
            name = "qwen_llm_generation_test",
            eos_prompts = ["exports"],  # its text ends at </s> after 4 tokens
            max_new_tokens = 8,
            program = ":qwen_llm",
            prompts = ["a runtime loads"],
            tokenizer = ":qwen_tokenizer",
        )

    Args:
      name: the test's name.
      program: an llm_program target.
      tokenizer: the tokenizer target the program was made with.
      prompts: the prompts, e.g. ["The runner reads"].
      max_new_tokens: tokens to generate per prompt (fewer when the context is full or the model
        ends the text).
      eos_prompts: more prompts, each of which must end at an end id before max_new_tokens: a text
        cut at the limit cannot show that the runner stops where the model stops, so give at
        least one prompt whose text ends.
      runtimes: ["python", "native"] (the default), or a part, where the program's backends run
        (docs/backends.md says where each does); a program of a backend of static shapes takes
        its prompt one token per call.
      native_runner: the native runner; default //native:et_runner (the release's, with release).
      arm64: also generate in native_runner built for arm64 Linux, under qemu, once per prompt
        (no tokens/s: the speed is emulated); docs/native.md, "arm64".
      release: the ExecuTorch release whose runtimes generate, e.g. "1.4": its LLM runner (from
        its lock, ahead of the toolchain's venv) and its native runner (//native:et_runner_1_4);
        the test prints and checks the version it ran. Default: the toolchain's, which must be
        the program's; an older one than the program's fails (docs/compatibility.md).
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    _generation_test(
        program = program,
        tokenizer = tokenizer,
        prompts = prompts,
        max_new_tokens = max_new_tokens,
        eos_prompts = eos_prompts,
        runtimes = runtimes,
        arm64 = arm64,
        **dict(release_test_attrs(release, ["arm64"] if arm64 else None, native_runner, kwargs), **config_target_attrs(name, EXPORTER_MODULES["generation"], kwargs))
    )
