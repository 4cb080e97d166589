"""arm64_binary: a binary built for //platforms:linux_aarch64 that runs here, under qemu.

`to_linux_aarch64` is the transition: an attribute with `cfg = to_linux_aarch64` (and
`_allowlist_function_transition`, see ALLOWLIST_ATTRS) builds its target for arm64 Linux
wherever the rule itself is built, so a host-side test can depend on an arm64 binary;
`arm64_launcher` writes the script that runs it.
"""

load("//rules:providers.bzl", "arm64_binary_info")
load("//rules/private/lib:runfiles.bzl", "rlocation", "write_launcher")

_LINUX_AARCH64 = str(Label("//platforms:linux_aarch64"))
_CROSSTOOL = str(Label("//toolchain/cc:suite"))

def _to_linux_aarch64_impl(settings, _attr):
    return {
        "//command_line_option:platforms": _LINUX_AARCH64,
        # With --incompatible_enable_cc_toolchain_resolution (.bazelrc), C++ toolchains follow
        # the platform. Without it, Bazel 4.2.3 picks them by --crosstool_top and --cpu, which
        # a transition cannot switch on: name the cross toolchain there too, so a workspace
        # without the flag also compiles the arm64 side with the cross g++. Tools built for the
        # execution platform keep the host's C++ toolchain.
        "//command_line_option:cpu": "aarch64",
        "//command_line_option:crosstool_top": _CROSSTOOL,
        "//command_line_option:host_crosstool_top": settings["//command_line_option:host_crosstool_top"] or settings["//command_line_option:crosstool_top"],
    }

to_linux_aarch64 = transition(
    implementation = _to_linux_aarch64_impl,
    inputs = [
        "//command_line_option:crosstool_top",
        "//command_line_option:host_crosstool_top",
    ],
    outputs = [
        "//command_line_option:platforms",
        "//command_line_option:cpu",
        "//command_line_option:crosstool_top",
        "//command_line_option:host_crosstool_top",
    ],
)

# What a rule with a `cfg = to_linux_aarch64` attribute needs besides it.
ALLOWLIST_ATTRS = {
    "_allowlist_function_transition": attr.label(
        default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
    ),
}

# Runs the aarch64 ELF: directly on an arm64 machine, elsewhere under qemu-user. binfmt_misc may
# be absent (containers), so qemu is started explicitly. The emulated core is qemu's "max" (every
# extension: dot product, i8mm, SVE2, bf16) without SME: with qemu 7.2's SME, XNNPACK's int8
# kernels gave MobileNet q8 outputs unrelated to the host's (SQNR 0.3 dB), which no device has
# confirmed. QEMU_CPU picks another core (cortex-a53, cortex-a76, max, ...).
# qemu 7.2 (Debian bookworm's) hands an aarch64 guest the host's /proc/cpuinfo, whose x86 text
# crashes the cpuinfo library inside PyTorch's aarch64 libc10 (ExecuTorch 1.4's binding takes its
# cpuinfo from there). Paths under qemu's -L root shadow the host's, so the root is a folder whose
# lib/ is the sysroot's and whose proc/cpuinfo describes two Neoverse-N1 cores (the instruction set
# still comes from -cpu, through the auxiliary vector).
_LAUNCHER = """elf="$runfiles/{elf}"
case "$(uname -m)" in
  aarch64 | arm64) exec "$elf" "$@" ;;
esac
sysroot="${{RULES_TORCH_EXPORT_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}}"
if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
  echo "rules_torch_export: {label} is an aarch64 binary; running it on $(uname -m) needs Debian's qemu-user-static, which is not installed; run: apt-get install qemu-user-static (./bazelw does it as root)" >&2
  exit 1
fi
if [ ! -e "$sysroot/lib/ld-linux-aarch64.so.1" ] || [ ! -e "$sysroot/lib/libstdc++.so.6" ]; then
  echo "rules_torch_export: {label} is an aarch64 binary; its C and C++ libraries come from Debian's g++-aarch64-linux-gnu (under $sysroot), which is not installed; run: apt-get install g++-aarch64-linux-gnu (./bazelw does it as root)" >&2
  exit 1
fi
root="${{TEST_TMPDIR:-${{TMPDIR:-/tmp}}}}/rules_torch_export_qemu_root_$(id -u)"
if [ ! -e "$root/proc/cpuinfo" ] || [ "$(readlink "$root/lib")" != "$sysroot/lib" ]; then
  mkdir -p "$root/proc" && ln -sfn "$sysroot/lib" "$root/lib"
  for cpu in 0 1; do
    printf 'processor\t: %s\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n' "$cpu"
  done > "$root/proc/cpuinfo.$$" && mv -f "$root/proc/cpuinfo.$$" "$root/proc/cpuinfo"
fi
exec qemu-aarch64-static -cpu "${{QEMU_CPU:-max,sme=off}}" -L "$root" "$elf" "$@"
"""

def _renamed(ctx, elf, runfiles):
    """runfiles with the ELF at <its path>.aarch64 instead of its own path.

    A test may hold the host build of the same binary, at the ELF's own path, in the same
    runfiles tree. The folder stays the same, so the ELF's $ORIGIN-relative RUNPATH still finds
    its libraries there.
    """
    root_symlinks = {entry.path: entry.target_file for entry in runfiles.root_symlinks.to_list()}
    root_symlinks[rlocation(ctx, elf) + ".aarch64"] = elf
    return ctx.runfiles(
        files = [f for f in runfiles.files.to_list() if f != elf],
        symlinks = {entry.path: entry.target_file for entry in runfiles.symlinks.to_list()},
        root_symlinks = root_symlinks,
    )

def arm64_launcher(ctx, target, launcher):
    """Writes `launcher`, a script that runs `target`'s aarch64 ELF here (under qemu on x86-64).

    For a rule with an attribute built with `cfg = to_linux_aarch64` (numerics_test's arm64 runner,
    say): put the returned runfiles in the rule's own.

    Args:
      ctx: the rule's context.
      target: the executable target, built for //platforms:linux_aarch64.
      launcher: the File to write.

    Returns:
      (runfiles: the launcher's, the ELF at <its path>.aarch64 and its libraries and data;
      Arm64BinaryInfo: the ELF and its own runfiles, for shipping).
    """
    elf = target[DefaultInfo].files_to_run.executable
    own = ctx.runfiles(files = [elf]).merge(target[DefaultInfo].default_runfiles)
    about = "runs {}, built for aarch64 Linux".format(target.label)
    write_launcher(ctx, launcher, about, _LAUNCHER.format(label = ctx.label, elf = rlocation(ctx, elf) + ".aarch64"))
    runfiles = ctx.runfiles(files = [launcher]).merge(_renamed(ctx, elf, own))
    return runfiles, arm64_binary_info(binary = elf, runfiles = own)

# The attributes of a test rule that also runs its native runner built for arm64 (numerics_test,
# llm_generation_test); arm64_runner_config writes the launcher.
ARM64_RUNNER_ATTRS = dict(ALLOWLIST_ATTRS, arm64_runner = attr.label(
    executable = True,
    cfg = to_linux_aarch64,
    doc = "For the arm64 run: native_runner's label, built for //platforms:linux_aarch64 (set by the macro).",
))

def arm64_runner_config(ctx, config):
    """Writes the launcher of ctx.attr.arm64_runner and names it in config["arm64_runner"].

    Args:
      ctx: the context of a test rule with ARM64_RUNNER_ATTRS.
      config: the test's config dict, to which it adds the launcher's runfiles path.

    Returns:
      The launcher's runfiles (the aarch64 ELF and its libraries with it).
    """
    launcher = ctx.actions.declare_file(ctx.label.name + ".config.arm64_runner")  # the name it had beside the config
    runfiles, _ = arm64_launcher(ctx, ctx.attr.arm64_runner[0], launcher)
    config["arm64_runner"] = launcher.short_path
    return runfiles

def _arm64_binary_impl(ctx):
    launcher = ctx.actions.declare_file(ctx.label.name)
    runfiles, info = arm64_launcher(ctx, ctx.attr.binary[0], launcher)
    return [DefaultInfo(executable = launcher, runfiles = runfiles), info]

arm64_binary = rule(
    implementation = _arm64_binary_impl,
    doc = """`binary` built for arm64 Linux (//platforms:linux_aarch64), wrapped in a launcher that
runs it here: directly on an arm64 machine, under `qemu-aarch64-static -L /usr/aarch64-linux-gnu`
on x86-64 (Debian's qemu-user-static and g++-aarch64-linux-gnu, which ./bazelw installs). Times
measured through it are emulated, not the device's.

`bazel run :<name> -- ARGS`, or put it in a test's `data` and start it like any executable. In
the runfiles the ELF is `<binary's path>.aarch64`, so a test can hold `binary`'s host build too.
To ship the ELF with its shared libraries, see app_archive.""",
    attrs = dict(ALLOWLIST_ATTRS, **{
        "binary": attr.label(
            mandatory = True,
            executable = True,
            cfg = to_linux_aarch64,
            doc = "A cc_binary (or any executable) to build for //platforms:linux_aarch64.",
        ),
    }),
    executable = True,
)
