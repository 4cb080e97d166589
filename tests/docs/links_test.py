"""The docs' links, section references and Bazel commands point at things that exist.

- Every relative link of README.md, CONTRIBUTING.md and docs/*.md names a file or folder of the
  repository, and its #anchor a heading of the page it names.
- Every reference to a page's section, `docs/caching.md, "Across machines"` or `README,
  "Use it in your repo"`, in those pages and in the code's comments and messages, names a heading
  of that page or a paragraph's bold lead (the heading itself, or its start: "Scale" for "Scale:
  analysis of 10,000 models").
  A section that moves to another page breaks the references that still cite the old one.
- Every label of a `bazel` or `./bazelw` command in their shell blocks names a package of this
  repository or of one of its example workspaces, and a target its BUILD file declares.

The test reads the source tree itself, through the WORKSPACE runfile's symlink (as
//tools/function_length does), so that links to any file of the repository can be checked.
"""

import os
import re

import pytest

# Pages that must exist: the front door and the pages it sends readers to for what left it.
REQUIRED_PAGES = ("README.md", "CONTRIBUTING.md", "docs/setup.md", "docs/concepts.md", "docs/performance.md",
                  "docs/upgrading.md", "docs/architecture.md")

# Workspaces whose packages the docs' commands may name: this one, and the examples run from their folders.
WORKSPACES = ("", "examples/consumer", "examples/own_lock")

# Targets that zoo_package() (models/zoo.bzl) declares in every zoo package, under these names.
ZOO_PACKAGE_TARGETS = ("dashboard", "update_goldens", "zoo_test")

# The files whose section references are checked besides the pages: code, BUILD files, configs.
CODE_SUFFIXES = (".py", ".bzl", ".sh", ".cc", ".h", ".bazelrc")
CODE_NAMES = ("BUILD", "WORKSPACE", "bazelw", "run", ".bazelrc")
_SKIPPED_DIRS = (".git", "__pycache__", "node_modules")

FENCE = re.compile(r"^ *```(\w*)\n(.*?)^ *```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
# `file`, "Section" / file "Section" / file's "Section" / [file](file), "Section".
SECTION_REFERENCE = re.compile(
    r"(?P<file>\bREADME(?:\.md)?|\bCONTRIBUTING\.md|(?<![\w/-])(?:docs/)?[\w-]+\.md)`?"
    r"(?:\]\([^)\s]*\))?(?:'s)?,?[ \n]+(?:#+ *|- *|\* *)*\"(?P<section>[^\"\n]+)\"")
LABEL = re.compile(r"(?<![\w@:/<])//([\w./-]*)(?::([\w.+-]+))?(?![\w<>])")


def _root():
    return os.path.dirname(os.path.realpath("WORKSPACE"))


ROOT = _root()


def _read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _pages():
    docs = sorted("docs/" + name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    return ["README.md", "CONTRIBUTING.md"] + docs


def _code_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith("bazel-"))
        for name in sorted(filenames):
            if name.endswith(CODE_SUFFIXES) or name in CODE_NAMES:
                yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def _prose(text):
    """The text without its code blocks and inline code, line numbers kept."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE_CODE.sub("", text)


def _headings(rel):
    text = FENCE.sub("", _read(rel))
    return [re.sub(r"[`*]", "", m.group(1)).strip() for m in re.finditer(r"^#+ +(.+)$", text, re.M)]


def _sections(rel):
    """The headings of a page, and the bold leads that open its paragraphs ("**Scale.** ...")."""
    text = FENCE.sub("", _read(rel))
    leads = [re.sub(r"[`*]", "", m.group(1)).strip() for m in re.finditer(r"^(?:- )?\*\*([^*\n]+)\*\*", text, re.M)]
    return _headings(rel) + leads


def _slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped but - and _, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _line(text, at):
    return text.count("\n", 0, at) + 1


PAGES = _pages()


def test_the_pages_that_hold_what_left_the_readme_are_checked():
    assert set(REQUIRED_PAGES) <= set(PAGES), sorted(set(REQUIRED_PAGES) - set(PAGES))
    for page in REQUIRED_PAGES:
        assert os.path.isfile(os.path.join(ROOT, page)), f"{page} is missing"


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_names_a_file_and_a_heading_that_exist(page):
    text = _read(page)
    broken = []
    for match in LINK.finditer(_prose(text)):
        target = match.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        where = f"{page}:{_line(_prose(text), match.start())}: {target}"
        if rel.startswith("..") or not os.path.exists(os.path.join(ROOT, rel)):
            broken.append(f"{where}: no such file")
        elif anchor and rel.endswith(".md") and anchor not in {_slug(h) for h in _headings(rel)}:
            broken.append(f"{where}: {rel} has no heading with that anchor")
    assert not broken, "\n".join(broken)


def _referenced_page(name, referrer):
    """The page a section reference names, as the repository path it resolves to, or None."""
    if name.startswith("README"):
        return "README.md"
    candidates = [name] if "/" in name else [os.path.join(os.path.dirname(referrer), name), "docs/" + name, name]
    return next((c for c in candidates if os.path.isfile(os.path.join(ROOT, c))), None)


def _broken_section_references(rel):
    text = _read(rel)
    if rel.endswith(".md"):
        text = _prose(text)
    for match in SECTION_REFERENCE.finditer(text):
        where = f"{rel}:{_line(text, match.start())}"
        page = _referenced_page(match.group("file"), rel)
        section = match.group("section").replace("`", "").strip().lower()
        if page is None:
            yield f"{where}: {match.group('file')} does not exist"
        elif not any(h.lower() == section or h.lower().startswith(section) for h in _sections(page)):
            yield f"{where}: {page} has no section \"{match.group('section')}\""


def test_every_section_reference_names_a_section_that_exists():
    broken = [problem for rel in list(_code_files()) + PAGES for problem in _broken_section_references(rel)]
    assert not broken, "\n".join(broken)


def test_section_references_are_found():
    """So that a broken pattern cannot pass by finding nothing."""
    found = {(m.group("file"), m.group("section")) for m in SECTION_REFERENCE.finditer(_read("bench/benchmark.py"))}
    assert ("docs/performance.md", "Speed") in found
    assert list(SECTION_REFERENCE.finditer('see [caching.md](caching.md),\n  "Across machines"'))


def _build_file(package):
    for workspace in WORKSPACES:
        folder = os.path.join(ROOT, workspace, package)
        for name in ("BUILD", "BUILD.bazel"):
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
    return None


def _label_problem(package, name):
    if package.endswith("...") or package == "":
        folder = package.rstrip("./")
        return None if any(os.path.isdir(os.path.join(ROOT, w, folder)) for w in WORKSPACES) else "no such folder"
    build = _build_file(package)
    if build is None:
        return "no such package"
    name = name or package.rsplit("/", 1)[-1]
    base = name.split(".")[0]  # <program>.benchmark, <test>.update: made by the macro of <program>
    with open(build, encoding="utf-8") as f:
        text = f.read()
    if f'"{base}"' in text or ("zoo_package(" in text and base in ZOO_PACKAGE_TARGETS):
        return None
    return f"{os.path.relpath(build, ROOT)} declares no {base!r}"


def _commands(text):
    for block in FENCE.finditer(text):
        if block.group(1) not in ("sh", "bash", "shell", "console"):
            continue
        for line in block.group(2).splitlines():
            command = line.split(" #", 1)[0]
            if re.search(r"\bbazel(w)?\b", command) and not command.lstrip().startswith("#"):
                yield command


@pytest.mark.parametrize("page", PAGES)
def test_every_command_names_packages_and_targets_that_exist(page):
    broken = []
    for command in _commands(_read(page)):
        for label in LABEL.finditer(command):
            problem = _label_problem(label.group(1), label.group(2))
            if problem:
                broken.append(f"{page}: {label.group(0)}: {problem}\n    {command.strip()}")
    assert not broken, "\n".join(broken)


def test_commands_are_found():
    commands = list(_commands(_read("README.md")))
    assert any("//models:resnet_pte" in c for c in commands) and any("test //..." in c for c in commands)


def test_the_readme_names_the_commands_ci_runs():
    """.ci/run runs the README's two commands; the README shows them verbatim."""
    readme, ci = _read("README.md"), _read(".ci/run")
    for command in ("./bazelw build //models:resnet_pte", "./bazelw test //..."):
        assert command in ci and command in readme, command
