"""The checker behind the code-shape rules: import circles, private names across modules, long functions,
long modules, wide settings classes, names resolved from strings.

Reads the source only (the AST, nothing imported), so a rule holds for code paths no test runs.
Every import counts wherever it is written (module level, inside a function, under
TYPE_CHECKING): an import moved into a function still ties the two modules together, it only
delays the moment Python notices. `from package import name` is an import of the submodule when
`package.name` is one, else of the package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# What the rules cover: the jobs, the Pulumi components and the Pulumi program.
SCOPES = ("jobs", "components", "__main__.py")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 600
MAX_SETTINGS_FIELDS = 25
# A class whose name ends so holds settings or a component's arguments: its fields are a reader's
# checklist, so past 25 it is split into sections.
SETTINGS_SUFFIXES = ("Settings", "Section", "Args")
# Builtins and modules that turn a string into an attribute, a module or a signature.
NAME_RESOLVERS = frozenset({"getattr", "setattr", "hasattr", "import_module", "signature", "__import__"})


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported from (or imported)
    name: str | None  # the name taken from it (`from target import name`), None for a module
    line: int


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def load(root: Path, scopes: tuple[str, ...] = SCOPES) -> dict[str, Module]:
    """Every module under `scopes` (folders or single files) of the tree at `root`, by dotted name."""
    paths: list[Path] = []
    for scope in scopes:
        where = root / scope
        paths += sorted(where.rglob("*.py")) if where.is_dir() else [where] if where.is_file() else []
    return {
        _module_name(root, path): Module(
            _module_name(root, path), path, ast.parse(path.read_text(), str(path)), path.name == "__init__.py"
        )
        for path in paths
    }


def _base(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join([*package, *([node.module] if node.module else [])])


def imports(module: Module, modules: dict[str, Module]) -> list[Import]:
    """The imports of `module` that reach another module of the tree."""
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found += [Import(module.name, a.name, None, node.lineno) for a in node.names if a.name in modules]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.append(Import(module.name, f"{base}.{alias.name}", None, node.lineno))
                elif base in modules:
                    found.append(Import(module.name, base, alias.name, node.lineno))
    return [i for i in found if i.target != module.name]


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    return {name: {i.target for i in imports(module, modules)} for name, module in modules.items()}


def import_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Groups of modules that reach each other through imports (Tarjan's strongly connected
    components with more than one module), each sorted, the groups sorted. import-linter's
    acyclic contract sees cycles between siblings; this one also sees a package's `__init__` and
    a module below it importing each other.
    """
    return _Tarjan(import_graph(modules)).components()


class _Tarjan:
    """Iterative, so a long chain of imports cannot exhaust the recursion limit."""

    def __init__(self, graph: dict[str, set[str]]) -> None:
        self.graph = graph
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.groups: list[list[str]] = []

    def components(self) -> list[list[str]]:
        for name in sorted(self.graph):
            if name not in self.index:
                self._visit(name)
        return sorted(self.groups)

    def _enter(self, node: str) -> tuple[str, Iterator[str]]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return node, iter(sorted(self.graph[node]))

    def _visit(self, start: str) -> None:
        work = [self._enter(start)]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    self.low[parent] = min(self.low[parent], self.low[node])
                self._close(node)
            elif child not in self.index:
                work.append(self._enter(child))
            elif child in self.on_stack:
                self.low[node] = min(self.low[node], self.index[child])

    def _close(self, node: str) -> None:
        """`node` roots a component when nothing below it reached higher: pop the component."""
        if self.low[node] != self.index[node]:
            return
        group: list[str] = []
        while not group or group[-1] != node:
            group.append(self.stack.pop())
            self.on_stack.discard(group[-1])
        if len(group) > 1:
            self.groups.append(sorted(group))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _bound_modules(module: Module, modules: dict[str, Module]) -> dict[str, str]:
    """Local names bound to modules of the tree (`import a.b as m`, `from a import b`)."""
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return bound


def private_imports(modules: dict[str, Module]) -> list[str]:
    """Private names one module takes from another: `from m import _x`, `m._x` on an imported
    module, and a private module (`pkg._m`) imported from outside its package.
    """
    found = []
    for module in modules.values():
        for i in imports(module, modules):
            if i.name is not None and _private(i.name):
                found.append(f"{module.name}:{i.line} imports {i.name} from {i.target}")
            parts = i.target.split(".")
            package = ".".join(parts[:-1])
            if _private(parts[-1]) and not (module.name == package or module.name.startswith(package + ".")):
                found.append(f"{module.name}:{i.line} imports the private module {i.target} from outside {package}")
        bound = _bound_modules(module, modules)
        found += [
            f"{module.name}:{node.lineno} uses {bound[node.value.id]}.{node.attr}"
            for node in ast.walk(module.tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and _private(node.attr)
        ]
    return sorted(set(found))


def function_lengths(modules: dict[str, Module]) -> dict[str, int]:
    """Lines of every function and method (decorators excluded, its docstring and nested
    functions included), by `module:Qualified.name`.
    """
    lengths: dict[str, int] = {}

    def walk(node: ast.AST, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                lengths[f"{module}:{name}"] = end - child.lineno + 1
                walk(child, module, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, module, f"{prefix}{child.name}.")
            else:
                walk(child, module, prefix)

    for module in modules.values():
        walk(module.tree, module.name, "")
    return lengths


def long_functions(modules: dict[str, Module], limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    return {name: lines for name, lines in function_lengths(modules).items() if lines > limit}


def long_modules(modules: dict[str, Module], limit: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Modules over `limit` lines, by dotted name."""
    lengths = {name: len(module.path.read_text().splitlines()) for name, module in modules.items()}
    return {name: lines for name, lines in lengths.items() if lines > limit}


def _is_class_var(annotation: ast.expr) -> bool:
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(target, ast.Name) and target.id == "ClassVar") or (
        isinstance(target, ast.Attribute) and target.attr == "ClassVar"
    )


def wide_settings(modules: dict[str, Module], limit: int = MAX_SETTINGS_FIELDS) -> dict[str, int]:
    """Settings and arguments classes (named `*Settings`, `*Section`, `*Args`) with more than `limit`
    fields of their own (annotated class attributes, ClassVars excluded), by `module:Class`.
    """
    wide: dict[str, int] = {}
    for module in modules.values():
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.ClassDef) or not node.name.endswith(SETTINGS_SUFFIXES):
                continue
            fields = [
                item
                for item in node.body
                if isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and not _is_class_var(item.annotation)
            ]
            if len(fields) > limit:
                wide[f"{module.name}:{node.name}"] = len(fields)
    return wide


def name_resolutions(modules: dict[str, Module]) -> list[str]:
    """Every call that resolves a name from a string (getattr, setattr, hasattr, importlib's
    import_module, inspect's signature, __import__), as `module:line call`.
    """
    found = []
    for module in modules.values():
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in NAME_RESOLVERS:
                found.append(f"{module.name}:{node.lineno} {called}")
    return sorted(found)


def top_level_modules(package: Path) -> list[str]:
    """The modules and subpackages directly in `package` (its own `__init__` excluded)."""
    children = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    children += [p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    return sorted(children)
