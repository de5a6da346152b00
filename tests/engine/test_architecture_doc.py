"""docs/ARCHITECTURE.md names only what exists, and the import rules it states hold.

Every repository path the document mentions (in code spans or anywhere in its text, the diagram included) must
exist, and every code span must be something this test can check and finds: a dotted or plain name defined in
the code (`Transformer.decode_step`, `translate_served`), a call whose keyword arguments the function takes
(`translate(with_attention=True)`), a command (`python -m benchmarks`, `explorer stop`), a page's URL, or a file
name the code uses. Names are found by reading the source (ast), so nothing heavy is imported and no model is
loaded; a span the test cannot classify fails too, so the document stays checkable.
"""

from __future__ import annotations

import argparse
import ast
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
TOP_FOLDERS = ("explorer", "ui", "pages", "benchmarks", "main_script", "tests", "checkpoints", "docs")
CODE_FOLDERS = ("explorer", "ui", "pages", "benchmarks", "main_script")  # where the names it mentions live
PATH = re.compile(rf"(?<![\w./-])(?:{'|'.join(TOP_FOLDERS)})/[\w./*-]*")
SPAN = re.compile(r"`([^`\n]+)`")
NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
CALL = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)")
FILE_NAME = re.compile(r"[\w-]+\.(?:py|md|json|safetensors|model|npz|toml|txt)")
# What the document states about imports: (package, imported prefixes it must not use, or None,
# the only project prefixes it may use, or None).
IMPORT_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...] = (
    ("explorer", ("streamlit", "ui", "pages", "main_script"), None),
    ("explorer.model", (), ("explorer.model", "explorer.config", "explorer.paper")),
    ("explorer.decoding", ("explorer.model", "explorer.fastpath", "explorer.inference"), None),
    ("explorer.figures", ("torch", "explorer.model"), None),
)


@dataclass
class Module:
    tree: ast.Module
    defined: dict[str, ast.AST] = field(default_factory=dict)  # top-level functions, classes, assignments
    imported: dict[str, str] = field(default_factory=dict)  # local name -> "module" or "module.name"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _targets(element)]
    return []


def _members(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names a module or class body defines: functions, classes, assignments and annotated fields."""
    found: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            found.update({name: node for target in node.targets for name in _targets(target)})
        elif isinstance(node, ast.AnnAssign):
            found.update({name: node for name in _targets(node.target)})
    return found


@cache
def code_index() -> dict[str, Module]:
    files = [ROOT / "app.py", *(p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py")))]
    index = {}
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = Module(tree, _members(tree.body))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                module.imported.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
            elif isinstance(node, ast.Import):
                module.imported.update({a.asname or a.name: a.name for a in node.names})
        index[_module_name(path)] = module
    return index


def _lookup(module_name: str, rest: list[str], depth: int = 0) -> list[ast.AST]:
    """What `rest` names inside the module (following its imports), as definitions; [] when nothing."""
    index = code_index()
    module = index[module_name]
    if not rest:
        return [module.tree]
    head, tail = rest[0], rest[1:]
    if f"{module_name}.{head}" in index:
        return _lookup(f"{module_name}.{head}", tail, depth)
    node = module.defined.get(head)
    if node is None:
        target = module.imported.get(head)
        if target is None or depth > 5:  # a chain of re-exports this long is a cycle
            return []
        if target in index:
            return _lookup(target, tail, depth + 1)
        source, _, name = target.rpartition(".")
        return _lookup(source, [name, *tail], depth + 1) if source in index else []
    return _in_class(node, tail)


def _in_class(node: ast.AST, tail: list[str]) -> list[ast.AST]:
    """What `tail` names inside a definition: a class's methods and fields (`Transformer.decode_step`)."""
    for part in tail:
        if not isinstance(node, ast.ClassDef) or part not in _members(node.body):
            return []
        node = _members(node.body)[part]
    return [node]


def resolve(dotted: str) -> list[ast.AST]:
    """Every definition `dotted` may name: from its longest module prefix, or (unqualified) anywhere."""
    parts = dotted.split(".")
    index = code_index()
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in index:
            return _lookup(".".join(parts[:cut]), parts[cut:])
    return [
        node
        for module in index.values()
        if parts[0] in module.defined
        for node in _in_class(module.defined[parts[0]], parts[1:])
    ]


def _parameters(node: ast.AST) -> set[str]:
    """The keyword names a function (or a class, through __init__ or its fields) names; a `**options` catch-all
    does not count, so a call the document shows must use a named parameter."""
    if isinstance(node, ast.ClassDef):
        members = _members(node.body)
        init = members.get("__init__")
        if init is not None:
            return _parameters(init)
        return {name for name, member in members.items() if isinstance(member, ast.AnnAssign)}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    return set()


@cache
def cli_commands() -> frozenset[str]:
    from explorer.cli import build_parser  # the subcommands import torch only when they run

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return frozenset(sub.choices)


@cache
def engine_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "explorer").rglob("*.py")))


def path_problem(text: str) -> str | None:
    relative = text.rstrip(".").replace("<page>", "*")
    if not relative:
        return None
    found = list(ROOT.glob(relative)) if "*" in relative else [ROOT / relative]
    return None if any(p.exists() for p in found) else f"no such path: {text}"


def command_problem(span: str) -> str | None:
    words = span.split()
    if words[0] == "python" and len(words) > 2 and words[1] == "-m":
        folder = ROOT / words[2].replace(".", "/")
        if (folder / "__init__.py").is_file():
            return None if (folder / "__main__.py").is_file() else f"package without __main__: {words[2]}"
        return None if folder.with_suffix(".py").is_file() else f"no such module: {words[2]}"
    if words[0] == "python":
        return path_problem(words[1])
    if words[0] == "explorer":
        return None if words[1] in cli_commands() else f"no such subcommand: explorer {words[1]}"
    if words[0] in ("pytest", "streamlit"):
        return next(filter(None, (path_problem(w) for w in words if PATH.fullmatch(w))), None)
    return f"a command this test cannot check: {span}"


def name_problem(name: str, keywords: list[str]) -> str | None:
    if name.startswith("st."):
        import streamlit as st

        return None if hasattr(st, name.removeprefix("st.")) else f"streamlit has no {name}"
    nodes = resolve(name)
    if not nodes:
        return f"not defined in the code: {name}"
    for node in nodes:
        if set(keywords) <= _parameters(node):
            return None
    return f"{name} takes none of these keywords: {keywords}"


def span_problem(span: str) -> str | None:
    """Why a code span names nothing real, or None when it checks out."""
    span = span.strip()
    if " " in span:
        return command_problem(span)
    if span.startswith("/"):  # a page's URL: /beam?beam_k=3
        page = span[1:].split("?")[0]
        return path_problem(f"pages/{page}.py")
    if "/" in span:
        return path_problem(span)
    if FILE_NAME.fullmatch(span):  # a file the code writes or reads: `spec.json`, `model.safetensors`
        known = (ROOT / span).exists() or f'"{span}"' in engine_source()
        return None if known else f"neither a file at the root nor a file name in explorer/: {span}"
    if call := CALL.fullmatch(span):
        return name_problem(call[1], re.findall(r"(\w+)=", call[2]))
    if NAME.fullmatch(span):
        return name_problem(span, [])
    if span.startswith(".") and NAME.fullmatch(span[1:]):  # an extension: `.po`
        return None if any(ROOT.glob(f"explorer/**/*{span}")) else f"no {span} file in explorer/"
    return f"a code span this test cannot check: {span}"


def problems(text: str) -> list[str]:
    spans = SPAN.findall(text)
    paths = PATH.findall(SPAN.sub(" ", text))  # paths outside code spans: the diagram, the prose
    found = [span_problem(span) for span in spans] + [path_problem(path) for path in paths]
    return [problem for problem in found if problem is not None]


def test_every_name_in_the_architecture_doc_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(SPAN.findall(text)) > 100, "the document should name the code it describes"
    assert problems(text) == []


@pytest.mark.parametrize(
    "span",
    [
        "RunManager.start",
        "translate(return_attention=True)",
        "explorer/model/nowhere.py",
        "ui/nowhere/",
        "Translation.attention_maps",
        "explorer.inference.translate_everything",
        "python -m benchmarks.nowhere",
        "explorer fly",
        "/nowhere?x=1",
        "st.no_such_thing",
        "nowhere.json",
        "{odd span}",
    ],
)
def test_a_wrong_name_is_caught(span: str) -> None:
    assert span_problem(span) is not None


def test_paths_outside_code_spans_are_checked() -> None:
    assert problems("A diagram node: explorer/nowhere/thing.py<br/>") == ["no such path: explorer/nowhere/thing.py"]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize(("package", "forbidden", "allowed"), IMPORT_RULES)
def test_the_import_rules_of_the_doc_hold(
    package: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] | None
) -> None:
    folder = ROOT / package.replace(".", "/")
    wrong = []
    for path in sorted(folder.rglob("*.py")):
        for name in _imports(path):
            project = _under(name, "explorer")
            if any(_under(name, p) for p in forbidden) or (
                allowed is not None and project and not any(_under(name, p) for p in allowed)
            ):
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []
