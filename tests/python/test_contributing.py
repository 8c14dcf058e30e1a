"""The documents against the code: README's size and paths, docs/ARCHITECTURE.md's table of
what may call what against every #include, qualified use (`layer::name`) and Python import,
docs/COMMANDS.md against every option the CLI declares, and each recipe of CONTRIBUTING.md
followed once (the optimizer recipe's places are found by reading the registry; commands,
operators and test folders have the places their recipes give them); the commit-msg hook and the
CI check of commit messages, on repositories made here."""

from __future__ import annotations

import ast
import functools
import glob
import os
import re
import subprocess
from typing import Dict, List, Set

import pytest

import build_helpers as bh

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCUMENTS = ["README.md", "CONTRIBUTING.md"] + sorted(
    os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md"))
)
TOP_FOLDERS = (
    "src",
    "tests",
    "patches",
    "scripts",
    "bench",
    "templates",
    "docs",
    "fuzz",
    ".githooks",
    ".ci",
)
PATH_PATTERN = re.compile(
    r"(?<![\w./~-])((?:%s)/[\w.<>*/+-]*[\w>*])" % "|".join(re.escape(f) for f in TOP_FOLDERS)
)


def read(path: str) -> str:
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def section(text: str, heading: str) -> str:
    """The text under a markdown heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    stop = re.compile(r"^#{1,%d} " % level, re.M).search(text, start + len(heading) + 1)
    return text[start : stop.start() if stop else len(text)]


def as_glob(path: str) -> str:
    """A path of a document as a glob: `<name>` and `<x>` placeholders match any name."""
    return re.sub(r"<[^>]+>", "*", path)


def matches(path: str) -> List[str]:
    return glob.glob(os.path.join(REPO, as_glob(path)))


# --- the documents -------------------------------------------------------------------------------


def test_readme_is_a_users_guide_of_at_most_250_lines():
    assert len(read("README.md").splitlines()) <= 250


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_path_a_document_names_exists(document):
    missing = sorted({p for p in PATH_PATTERN.findall(read(document)) if not matches(p)})
    assert not missing, f"{document} names paths that do not exist: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_link_between_documents_resolves(document):
    base = os.path.dirname(os.path.join(REPO, document))
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", read(document))
    missing = [link for link in links if not os.path.exists(os.path.join(base, link))]
    assert not missing, f"{document} links to missing files: {missing}"


# --- what may call what --------------------------------------------------------------------------


def allowed_includes() -> Dict[str, Set[str]]:
    table = section(read("docs/ARCHITECTURE.md"), "## What may call what")
    allowed = {}
    for layer, may in re.findall(r"^\| (\w+) \| ([^|]*) \|$", table, re.M):
        if layer != "layer":
            allowed[layer] = set(re.findall(r"\b[a-z]+\b", may)) - {"nothing", "of", "ours"}
    return allowed


def included_layers(folder: str) -> Set[str]:
    layers = set()
    for path in glob.glob(os.path.join(REPO, folder, "*.[ch]*")):
        with open(path, encoding="utf-8") as f:
            layers |= set(re.findall(r'^#include "(\w+)/', f.read(), re.M))
    return layers


def test_the_toolchain_layers_include_only_what_architecture_allows():
    allowed = allowed_includes()
    folders = {layer: f"src/toolchain/{layer}" for layer in allowed if layer != "cli"}
    folders["cli"] = "src/cli"
    on_disk = {
        os.path.basename(p.rstrip("/")) for p in glob.glob(os.path.join(REPO, "src/toolchain/*/"))
    }
    assert on_disk <= set(folders), f"layers missing from the table: {on_disk - set(folders)}"
    for layer, folder in folders.items():
        used = included_layers(folder) - {layer}
        assert used <= allowed[layer], (
            f"{folder} includes {sorted(used - allowed[layer])}, which docs/ARCHITECTURE.md "
            f"does not allow it"
        )


def qualified_layers(folder: str, layers: Set[str]) -> Dict[str, List[str]]:
    """The layers a folder's code names as `layer::name` (comments left out): layer -> uses."""
    pattern = re.compile(r"(?<![\w:])(?:apexnpu::)?(%s)::(\w+)" % "|".join(sorted(layers)))
    uses: Dict[str, List[str]] = {}
    for path in glob.glob(os.path.join(REPO, folder, "*.[ch]*")):
        with open(path, encoding="utf-8") as f:
            code = re.sub(r"//[^\n]*", "", f.read())
        for layer, name in pattern.findall(code):
            uses.setdefault(layer, []).append(f"{os.path.basename(path)}: {layer}::{name}")
    return uses


def test_the_toolchain_layers_name_only_what_architecture_allows():
    """An #include is not the only way across a layer: a header of an allowed layer brings the
    types of the layers below it, and `patch::to_string(file.status)` compiles in the CLI through
    commands/gen.h. The table holds for what the code calls, too."""
    allowed = allowed_includes()
    for layer in allowed:
        folder = "src/cli" if layer == "cli" else f"src/toolchain/{layer}"
        uses = qualified_layers(folder, set(allowed))
        wrong = sorted(
            u
            for used, found in uses.items()
            if used != layer and used not in allowed[layer]
            for u in found
        )
        assert not wrong, (
            f"{folder} calls {wrong}, which docs/ARCHITECTURE.md does not allow "
            f"it (it may use {sorted(allowed[layer])})"
        )


def test_every_catch_of_the_toolchain_is_one_the_error_rule_names():
    """Errors are caught once, in main; an expected failure is a value. CONTRIBUTING names the
    files whose other catches it allows (nlohmann::json's exceptions, turned into an Error
    naming the file, are allowed in any reader), so a new catch is either a value or a new line
    of the rule."""
    rule = section(read("CONTRIBUTING.md"), "## House rules")
    rule = rule[rule.index("- **Errors**") :]
    rule = rule[: rule.index("\n- ", 1)]
    named = set(PATH_PATTERN.findall(rule))
    unnamed = []
    for path in sorted(glob.glob(os.path.join(REPO, "src/toolchain/*/*.[ch]*"))) + sorted(
        glob.glob(os.path.join(REPO, "src/cli/*.[ch]*"))
    ):
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8") as f:
            code = re.sub(r"//[^\n]*", "", f.read())
        for caught in re.findall(r"\bcatch\s*\(([^)]*)\)", code):
            if "nlohmann::json::exception" not in caught and rel not in named:
                unnamed.append(f"{rel}: catch ({caught})")
    assert not unnamed, (
        f"catches the error rule of CONTRIBUTING.md does not name: {unnamed}; make the failure "
        f"a value (std::optional, Expected) or add the file to the rule, saying why"
    )
    stale = sorted(p for p in named if p.endswith(".cpp") and "catch" not in read(p))
    assert not stale, f"the error rule names files without a catch: {stale}"


def test_the_runtime_includes_nothing_of_the_toolchain():
    runtime_folders = {
        os.path.basename(p.rstrip("/")) for p in glob.glob(os.path.join(REPO, "src/runtime/*/"))
    }
    for folder in glob.glob(os.path.join(REPO, "src/runtime/*/")):
        used = included_layers(os.path.relpath(folder, REPO))
        assert used <= runtime_folders, f"{folder} includes {sorted(used - runtime_folders)}"


def python_sources(folder: str) -> List[str]:
    return sorted(glob.glob(os.path.join(REPO, folder, "**", "*.py"), recursive=True))


def imported_modules(path: str) -> Set[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_the_emulator_never_imports_apex():
    for path in python_sources("src/torch_npu"):
        apex = {m for m in imported_modules(path) if m == "apex" or m.startswith("apex.")}
        assert not apex, f"{os.path.relpath(path, REPO)} imports {sorted(apex)}"


def test_apex_reaches_torch_npu_only_through_its_public_api():
    for path in python_sources("patches/overlay"):
        private = {
            m
            for m in imported_modules(path)
            if m.startswith("torch_npu.") and any(part.startswith("_") for part in m.split(".")[1:])
        }
        with open(path, encoding="utf-8") as f:
            private |= set(re.findall(r"\btorch_npu\.(_(?!_)\w*)", f.read()))
        assert not private, f"{os.path.relpath(path, REPO)} uses torch_npu's {sorted(private)}"


# --- the optimizer recipe, by the registry -------------------------------------------------------


def registry_rows() -> List[Dict[str, str]]:
    return [{"class": c, "kind": k, "npu_class": n} for c, k, n in bh.registry_rows(REPO)]


def recipe_places(heading: str) -> List[str]:
    """The places of the optimizer recipe's list `heading` ("every" or "some"): the paths that
    open each item, before the colon that starts its description."""
    text = section(read("CONTRIBUTING.md"), "### An optimizer")
    every = text[text.index("Every optimizer touches:") : text.index("When it needs them:")]
    some = text[text.index("When it needs them:") : text.index("\nTests:")]
    items = re.split(r"^- ", {"every": every, "some": some}[heading], flags=re.M)[1:]
    places = [p for item in items for p in PATH_PATTERN.findall(item.split("`: ", 1)[0])]
    assert places, f"no places in the optimizer recipe's {heading} list"
    return places


def own_class_rows() -> List[Dict[str, str]]:
    """The kinds with a class of their own (adamw reuses Adam's class with other defaults)."""
    rows = registry_rows()
    first = {}
    for row in rows:
        first.setdefault(row["class"], row)
    return list(first.values())


def mentions(row: Dict[str, str]) -> re.Pattern:
    options = row["class"][len("Fused") :] + "Options"
    return re.compile(r"\b(%s|%s|%s)\b" % (row["class"], row["npu_class"], options))


@functools.lru_cache(maxsize=None)
def source_texts() -> Dict[str, str]:
    """The code and docs of src/, patches/ and bench/, read once: path -> text."""
    texts = {}
    for folder in ("src", "patches", "bench"):
        for path in glob.glob(os.path.join(REPO, folder, "**", "*"), recursive=True):
            # A link (torch_npu's copy of the overlay's optimizer_kinds) is no place to edit.
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if path.endswith((".py", ".h", ".cpp", ".md", ".json")):
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts[os.path.relpath(path, REPO)] = f.read()
    return texts


def files_naming(row: Dict[str, str]) -> Set[str]:
    pattern = mentions(row)
    return {path for path, text in source_texts().items() if pattern.search(text)}


def test_every_place_of_the_optimizer_recipe_holds_every_optimizer():
    """Every place missed, named at once (a new optimizer's recipe followed but for them)."""
    missed = []
    for place in recipe_places("every"):
        rows = (
            registry_rows() if "npu_fused_" in place or "torch_npu" in place else own_class_rows()
        )
        for row in rows:
            if "<name>" in place:
                path = place.replace("<name>", row["kind"])
                if not os.path.exists(os.path.join(REPO, path)):
                    missed.append(f"{place} has no {path} for {row['npu_class']}")
            elif not mentions(row).search(read(place)):
                missed.append(f"{place} does not name {row['npu_class']}")
    assert not missed, f"the optimizer recipe's places miss optimizers: {missed}"


def test_the_places_every_optimizer_occupies_are_the_recipes():
    listed = [
        re.compile(re.escape(p).replace(re.escape("<name>"), r"\w+") + "$")
        for p in recipe_places("every") + recipe_places("some")
    ]
    rows = own_class_rows()
    per_kind = [{f.replace(row["kind"], "<name>") for f in files_naming(row)} for row in rows]
    everywhere = set.intersection(*per_kind)
    unlisted = sorted(
        f for f in everywhere if not any(p.match(f.replace("<name>", "x")) for p in listed)
    )
    assert not unlisted, (
        f"every optimizer of the registry is named in {unlisted}, "
        f"which CONTRIBUTING.md's optimizer recipe does not list"
    )


def test_the_optional_places_of_the_optimizer_recipe_exist():
    for place in recipe_places("some"):
        assert matches(place), place


def recipe_tests() -> List[str]:
    """The test files the optimizer recipe's "Tests:" paragraph names."""
    text = section(read("CONTRIBUTING.md"), "### An optimizer")
    return sorted(set(PATH_PATTERN.findall(text[text.index("\nTests:") :])))


def test_every_test_of_the_optimizer_recipe_covers_every_optimizer():
    """A test place of the recipe that covers the kinds (naming most of them) names each one:
    a new optimizer's cases left out of one are named here, with the place."""
    rows = registry_rows()
    missed = []
    for place in recipe_tests():
        text = read(place)
        named = [row for row in rows if mentions(row).search(text)]
        if 2 * len(named) > len(rows):
            missed += [f"{place} lacks {r['npu_class']}" for r in rows if r not in named]
    assert not missed, f"the optimizer recipe's tests miss kinds of the registry: {missed}"


def test_every_kind_of_the_registry_has_its_description():
    """The recipe's description place: one Kind per registry row, with its kind and class."""
    text = read("patches/overlay/apex/optimizers/optimizer_kinds.py")
    described = dict(re.findall(r'runtime = "(\w+)"\n    class_name = "(\w+)"', text))
    wanted = {row["kind"]: row["npu_class"] for row in registry_rows()}
    missing = sorted(f"{k} ({c})" for k, c in wanted.items() if described.get(k) != c)
    assert not missing, f"optimizer_kinds.py has no description (Kind) of {missing}"
    extra = sorted(set(described) - set(wanted))
    assert not extra, f"optimizer_kinds.py describes kinds the registry lacks: {extra}"


# --- the other recipes ---------------------------------------------------------------------------


def test_every_command_has_the_places_of_the_command_recipe():
    commands = [
        os.path.basename(p)[len("cmd_") : -len(".cpp")]
        for p in glob.glob(os.path.join(REPO, "src/cli/cmd_*.cpp"))
    ]
    assert "gen" in commands and "make_patch" in commands
    adders = read("src/cli/commands.cpp")
    for name in commands:
        for suffix in (".h", ".cpp"):
            assert os.path.exists(os.path.join(REPO, "src/toolchain/commands", name + suffix))
        assert re.search(r"\badd_%s\w*\(" % name, adders), f"commands.cpp lists no adder of {name}"


def cli_option_names(code: str) -> List[List[str]]:
    """The names of each option a CLI source declares: the string literals of the first argument
    of every add_option/add_flag ("-o,--output" gives -o and --output; a positional its name)."""
    options = []
    for call in re.finditer(r"\badd_(?:option|flag)\(", code):
        first = re.match(r'(?:[^,()"]|"[^"]*")*', code[call.end() :]).group(0)
        names = [n for literal in re.findall(r'"([^"]*)"', first) for n in literal.split(",") if n]
        if names:
            options.append(names)
    return options


def command_section(document: str, command: str) -> str:
    """A command's paragraphs in docs/COMMANDS.md: from its bold heading to the next one's."""
    start = document.find("**`apexnpu %s" % command)
    assert start >= 0, f"docs/COMMANDS.md has no **`apexnpu {command}`** paragraph"
    stop = document.find("**`apexnpu ", start + 1)
    stop = document.find("\n## ", start) if stop < 0 else stop
    return document[start : stop if stop >= 0 else len(document)]


def test_every_cli_option_is_in_commands_md():
    """Each option a cmd_*.cpp declares appears (by one of its names) in that command's
    paragraphs of docs/COMMANDS.md; the global and shared ones anywhere in it."""
    document = read("docs/COMMANDS.md")
    checked = 0
    for path in sorted(glob.glob(os.path.join(REPO, "src/cli/*.cpp"))):
        name = os.path.basename(path)
        command = name[len("cmd_") : -len(".cpp")].replace("_", "-")
        text = command_section(document, command) if name.startswith("cmd_") else document
        with open(path, encoding="utf-8") as f:
            for names in cli_option_names(f.read()):
                checked += 1
                assert any(re.search(re.escape(n) + r"(?![\w-])", text) for n in names), (
                    f"{name} declares {'/'.join(names)}, which docs/COMMANDS.md does not describe"
                    + (f" under apexnpu {command}" if name.startswith("cmd_") else "")
                )
    assert checked >= 30


def operator_modules() -> List[str]:
    """The operator modules of src/torch_npu/_ops (its helpers' names start with "_")."""
    return sorted(
        os.path.relpath(p, REPO)
        for p in glob.glob(os.path.join(REPO, "src/torch_npu/_ops/[!_]*.py"))
    )


def declared_operators(module: str) -> List[str]:
    """The names ``module`` declares with ``@operator`` (each def's, and its ``aliases``), read
    from its source as _ops/_registry.py registers them on import."""
    names = []
    for node in ast.parse(read(module)).body:
        for decorator in getattr(node, "decorator_list", []):
            call = decorator if isinstance(decorator, ast.Call) else None
            if getattr(call.func if call else decorator, "id", "") != "operator":
                continue
            names.append(node.name)
            for keyword in call.keywords if call else []:
                if keyword.arg == "aliases":
                    names += [alias.value for alias in keyword.value.elts]
    return names


def operators() -> List[str]:
    return [name for module in operator_modules() for name in declared_operators(module)]


def test_every_npu_function_of_an_operator_module_is_declared():
    for module in operator_modules():
        declared = declared_operators(module)
        for node in ast.parse(read(module)).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("npu_"):
                assert node.name in declared, (
                    f"{module}: {node.name} is not declared with @operator, so torch_npu has "
                    "no such name"
                )


def test_every_npu_operator_is_documented_and_tested():
    documented = read("docs/NPU_OPERATORS.md")
    tests = "".join(
        read(os.path.relpath(p, REPO))
        for p in glob.glob(os.path.join(REPO, "tests/python/test_npu_op_*.py"))
    )
    names = operators()
    assert "npu_rms_norm" in names
    for name in names:
        assert re.search(r"`%s[(`]" % re.escape(name), documented), (
            f"{name} has no row in docs/NPU_OPERATORS.md"
        )
        assert re.search(r"\b%s\b" % re.escape(name), tests), (
            f"no tests/python/test_npu_op_*.py calls {name}"
        )


def test_every_cpp_test_folder_is_an_executable():
    cmake = read("tests/CMakeLists.txt")
    for folder in glob.glob(os.path.join(REPO, "tests", "*/")):
        name = os.path.basename(folder.rstrip("/"))
        if glob.glob(os.path.join(folder, "*_test.cpp")):
            assert re.search(r"\b%s\b" % name, cmake), f"tests/{name} is not built"


# --- commit messages -----------------------------------------------------------------------------


def git(cwd: str, *args: str, check: bool = True, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=check
    )


@pytest.fixture
def repo_with_hook(tmp_path):
    git(str(tmp_path), "init", "-q")
    git(str(tmp_path), "config", "core.hooksPath", os.path.join(REPO, ".githooks"))
    (tmp_path / "a").write_text("a\n")
    git(str(tmp_path), "add", "a")
    return str(tmp_path)


def test_the_commit_msg_hook_refuses_a_subject_over_72_characters(repo_with_hook):
    refused = git(repo_with_hook, "commit", "-q", "-m", "x" * 73, check=False)
    assert refused.returncode != 0
    assert "73 characters, at most 72" in refused.stderr
    git(repo_with_hook, "commit", "-q", "-m", "x" * 72, "-m", "Why, in the body.")


def test_the_commit_msg_hook_wants_a_blank_line_after_the_subject(repo_with_hook):
    refused = git(repo_with_hook, "commit", "-q", "-F", "-", check=False, stdin="subject\nbody\n")
    assert refused.returncode != 0
    assert "second line must be blank" in refused.stderr


def test_check_commits_names_each_bad_commit_of_a_range(tmp_path):
    repo = str(tmp_path)
    git(repo, "init", "-q")
    for i, subject in enumerate(["first", "y" * 80, "third", "z" * 75]):
        (tmp_path / "f").write_text(str(i))
        git(repo, "add", "f")
        git(repo, "commit", "-q", "--no-verify", "-m", subject)
    script = os.path.join(REPO, "scripts", "check_commits.sh")
    whole = subprocess.run([script, "HEAD~3..HEAD"], cwd=repo, capture_output=True, text=True)
    assert whole.returncode == 1
    assert "3 commits" in whole.stdout and "2 with a bad message" in whole.stdout
    assert "80 characters" in whole.stderr and "75 characters" in whole.stderr
    good = subprocess.run([script, "HEAD~2..HEAD~1"], cwd=repo, capture_output=True, text=True)
    assert good.returncode == 0, good.stderr


def test_ci_checks_the_commits_it_is_given():
    ci = read(".ci/run")
    assert "scripts/check_commits.sh" in ci
    since = read(".ci/commits-checked-since").strip()
    assert re.fullmatch(r"[0-9a-f]{40}", since)
