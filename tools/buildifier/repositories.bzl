"""The buildifier repository: the real binary from npm's @bazel/buildifier, which ships one per
platform. Declared in WORKSPACE; fetched only when //tools/buildifier is built."""

_VERSION = "8.2.1"

# sha256 of `npm pack @bazel/buildifier@8.2.1`; a different tarball fails the fetch.
_SHA256 = "b96ea9b13003036c801f52bee6f9b0314738f8432e5cb9d814c89f59292604ee"

_BINARIES = {
    ("linux", "amd64"): "buildifier-linux_amd64",
    ("linux", "x86_64"): "buildifier-linux_amd64",
    ("linux", "aarch64"): "buildifier-linux_arm64",
    ("mac os x", "x86_64"): "buildifier-darwin_amd64",
    ("mac os x", "aarch64"): "buildifier-darwin_arm64",
}

def _buildifier_repository_impl(rctx):
    npm = rctx.which("npm")
    if not npm:
        fail("rules_torch_export: buildifier comes from npm's @bazel/buildifier, and there is no npm on PATH; install Node.js and npm")
    rctx.report_progress("npm pack @bazel/buildifier@" + _VERSION)
    packed = rctx.execute([npm, "pack", "--silent", "@bazel/buildifier@" + _VERSION], timeout = 300)
    if packed.return_code != 0:
        fail("rules_torch_export: npm pack @bazel/buildifier@{} failed:\n{}".format(_VERSION, packed.stderr[-2000:]))
    tarball = packed.stdout.strip().splitlines()[-1]
    digest = rctx.execute(["sha256sum", tarball]).stdout.split(" ")[0]
    if digest != _SHA256:
        fail("rules_torch_export: {} has sha256 {}, expected {}".format(tarball, digest, _SHA256))
    rctx.extract(tarball, stripPrefix = "package")
    rctx.delete(tarball)
    arch = rctx.execute(["uname", "-m"]).stdout.strip()  # Bazel 4.2.3 has no rctx.os.arch
    binary = _BINARIES.get((rctx.os.name.lower(), arch))
    if not binary:
        fail("rules_torch_export: no buildifier in @bazel/buildifier for {} {}".format(rctx.os.name, arch))
    rctx.symlink(binary, "buildifier")
    rctx.file("BUILD", 'exports_files(["buildifier"])\n')

buildifier_repository = repository_rule(
    implementation = _buildifier_repository_impl,
    doc = "Fetches buildifier {} with npm pack and checks the tarball's sha256.".format(_VERSION),
)
