"""Analysis tests: a program of a backend whose packages have a lock of their own declares the
whole package tree to its lowering (every file under site-packages/ beside the identity), so the
packages' digests are in the action's key and a remote executor receives them; its config names
the identity file alone, as it always did, so the manifest's settings digest keeps its bytes."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _declared_packages_test_impl(ctx):
    env = analysistest.begin(ctx)
    actions = analysistest.target_actions(env)
    lowerings = [a for a in actions if a.mnemonic == "ExecuTorchLower"]
    asserts.equals(env, 1, len(lowerings), "lowering actions")
    inputs = lowerings[0].inputs.to_list() if lowerings else []
    repository = "external/{}/".format(ctx.attr.repository)
    tree = [f for f in inputs if repository + "site-packages/" in f.path]
    asserts.true(env, len(tree) > 100, "the lowering declares {} files of {}'s site-packages".format(len(tree), ctx.attr.repository))
    for module in ctx.attr.modules:
        asserts.true(env, [f for f in tree if f.path.endswith("site-packages/" + module)], "the lowering declares " + module)
    asserts.false(env, [f for f in tree if "/bin/" in f.path or f.basename == "RECORD"], "files that name this machine's paths")
    configs = [json.decode(a.content) for a in actions if a.mnemonic == "FileWrite" and "\"backend_packages\"" in a.content]
    asserts.true(env, bool(configs), "a config that names the packages")
    for config in configs:
        asserts.equals(env, [repository + "identity.txt"], config["backend_packages"])
    return analysistest.end(env)

declared_packages_test = analysistest.make(
    _declared_packages_test_impl,
    attrs = {
        "repository": attr.string(doc = "The package repository, e.g. torch_export_backend_arm."),
        "modules": attr.string_list(doc = "Files the tree must hold, relative to site-packages/."),
    },
)
