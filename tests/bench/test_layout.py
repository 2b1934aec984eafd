"""The benchmark's modules stay readable: no import circle among them, no import of one
of them hidden inside a function (the way a circle is dodged), none over 400 lines."""

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
MODULES = {path.stem: path for path in BENCH.glob("*.py") if path.stem != "__init__"}


def bench_imports(node: ast.AST) -> set[str]:
    """The bench modules an import statement names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module == "bench":
        names = [f"bench.{alias.name}" for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        names = [node.module]
    else:
        return set()
    return {name.split(".")[1] for name in names if name.startswith("bench.")}


def module_level_imports(tree: ast.Module) -> set[str]:
    found = set()
    for node in tree.body:
        found |= bench_imports(node)
    return found


def nested_imports(tree: ast.Module) -> set[str]:
    found = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for node in ast.walk(function):
                found |= bench_imports(node)
    return found


def parsed(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text())


def test_the_bench_modules_import_each_other_without_a_circle():
    graph = {name: module_level_imports(parsed(name)) for name in MODULES}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"import circle in bench/: {error.args[1]}") from None


def test_no_bench_module_is_imported_inside_a_function():
    hidden = {name: sorted(nested_imports(parsed(name))) for name in MODULES}
    assert {name: found for name, found in hidden.items() if found} == {}


def test_no_bench_module_is_over_400_lines():
    lengths = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in lengths.items() if n > 400} == {}
