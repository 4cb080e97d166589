"""Local stand-ins for the repositories that Bazel 4.2.3 downloads, so that builds work offline."""

load(":stub_repository.bzl", "stub_repository")

def offline_bazel_repositories():
    """Declares @rules_cc, @remote_coverage_tools and @rules_java without any download.

    Call it in WORKSPACE before anything else, so that these definitions win over the ones that
    Bazel appends to every WORKSPACE.
    """
    stub_repository(
        name = "rules_cc",
        files = {
            Label("//third_party:rules_cc.BUILD"): "BUILD",
            Label("//third_party:rules_cc_defs.bzl"): "cc/defs.bzl",
            Label("//third_party:empty.BUILD"): "cc/BUILD",
        },
    )
    stub_repository(
        name = "rules_java",
        files = {
            Label("//third_party:rules_java.BUILD"): "BUILD",
            Label("//third_party:rules_java_defs.bzl"): "java/defs.bzl",
            Label("//third_party:empty.BUILD"): "java/BUILD",
        },
    )
    stub_repository(
        name = "remote_coverage_tools",
        files = {Label("//third_party:remote_coverage_tools.BUILD"): "BUILD"},
    )
