"""write_launcher's script (rules/private/lib/runfiles.bzl) finds the runfiles tree that holds it:
its own beside it, or the one it sits in, before a RUNFILES_DIR or TEST_SRCDIR it inherits,
which may name another tree (a test's, around a nested `bazel run`)."""

import os
import subprocess

from runfiles import Runfiles

SELF = "rules_torch_export/tests/launcher/where"
LAUNCHER = Runfiles.Create().Rlocation(SELF)
TREE = LAUNCHER[:-len("/" + SELF)]


def _plant(root):
    """Makes root a runfiles tree holding the launcher, as Bazel lays one out."""
    path = os.path.join(root, SELF)
    os.makedirs(os.path.dirname(path))
    os.symlink(os.path.realpath(LAUNCHER), path)


def _run(launcher, cwd=None, **variables):
    env = {k: v for k, v in os.environ.items() if k not in ("RUNFILES_DIR", "TEST_SRCDIR", "RUNFILES_MANIFEST_FILE")}
    env.update(variables)
    return subprocess.run([launcher, "a b", "c"], capture_output=True, text=True, env=env, cwd=cwd)


def _found(result):
    assert result.returncode == 0, result.stderr
    tree, args = result.stdout.rstrip("\n").split(" ", 1)
    assert args == "a b c"
    return os.path.realpath(tree)


def test_inside_its_tree_it_ignores_an_inherited_runfiles_dir(tmp_path):
    other = str(tmp_path / "other.runfiles")
    _plant(other)
    assert _found(_run(LAUNCHER, RUNFILES_DIR=other, TEST_SRCDIR=other)) == os.path.realpath(TREE)


def test_beside_its_own_tree_it_takes_that_one(tmp_path):
    # bazel-bin/<pkg>/where and where.runfiles, started where a test's RUNFILES_DIR is set.
    launcher = str(tmp_path / "where")
    os.symlink(os.path.realpath(LAUNCHER), launcher)
    _plant(launcher + ".runfiles")
    assert _found(_run(launcher, RUNFILES_DIR=TREE)) == os.path.realpath(launcher + ".runfiles")


def test_by_a_relative_path_it_takes_the_variables():
    cwd = os.path.join(TREE, "rules_torch_export")
    relative = "tests/launcher/where"
    assert _found(_run(relative, cwd=cwd, RUNFILES_DIR=TREE)) == os.path.realpath(TREE)
    assert _found(_run(relative, cwd=cwd, TEST_SRCDIR=TREE)) == os.path.realpath(TREE)
    assert _found(_run(relative, cwd=cwd, RUNFILES_DIR=cwd, TEST_SRCDIR=TREE)) == os.path.realpath(TREE)


def test_without_a_tree_it_fails_in_one_line(tmp_path):
    launcher = str(tmp_path / "where")
    os.symlink(os.path.realpath(LAUNCHER), launcher)
    result = _run(launcher, RUNFILES_DIR=str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"rules_torch_export: //tests/launcher:where: no runfiles tree holds {SELF}; run it with bazel run or "
        "bazel test, or from a target that has it in data"]
