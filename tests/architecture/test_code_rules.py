"""The code's shape, checked over jobs/, components/ and the Pulumi program (`code_rules` reads the AST).

- No import circles: two modules that import each other, even through a function-local import,
  share something that wants a third module.
- No private name crosses a module: what two modules share is made public on purpose (a private
  module stays inside its package).
- No function over 60 lines: a long step is split into small, well-named ones (the Pulumi program
  reads as a list of components, each built by a small function).

The checker is tested too, on small synthetic trees, so these rules can fail.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.architecture.code_rules import (
    MAX_FUNCTION_LINES,
    Module,
    import_cycles,
    load,
    long_functions,
    private_imports,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return load(REPO_ROOT)


def test_the_rules_read_the_whole_tree(modules: dict[str, Module]) -> None:
    assert {"__main__", "components.batch_jobs", "jobs.reconcile.run", "jobs.extract.ocr.labels"} <= modules.keys()


def test_no_import_circles(modules: dict[str, Module]) -> None:
    assert import_cycles(modules) == []


def test_no_private_name_crosses_a_module(modules: dict[str, Module]) -> None:
    assert private_imports(modules) == []


def test_no_function_over_60_lines(modules: dict[str, Module]) -> None:
    assert long_functions(modules) == {}, "split it: functions stay within 60 lines"


# --- the checker itself, on synthetic trees ---------------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> dict[str, Module]:
    for name, text in files.items():
        path = root / "jobs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return load(root, ("jobs",))


def test_a_circle_is_found_even_through_a_function_local_import(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "labels.py": "def pair():\n    from jobs.letterhead import vendor\n    return vendor()\n",
            "letterhead.py": "from jobs.labels import pair\n\ndef vendor():\n    return 1\n",
            "fields.py": "from jobs import labels, letterhead\n",
        },
    )
    assert import_cycles(modules) == [["jobs.labels", "jobs.letterhead"]]


def test_a_relative_and_a_type_checking_import_close_a_circle_too(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from .b import B\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from jobs.pkg.c import C\nB = 1\n",
            "pkg/c.py": "from jobs.pkg import a\nC = 2\n",
        },
    )
    assert import_cycles(modules) == [["jobs.pkg.a", "jobs.pkg.b", "jobs.pkg.c"]]


def test_a_chain_of_imports_is_no_circle(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {"__init__.py": "", "a.py": "from jobs import b\n", "b.py": "from jobs.c import x\n", "c.py": "x = 1\n"},
    )
    assert import_cycles(modules) == []


def test_private_names_taken_across_modules_are_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "shared.py": "_helper = 1\nPUBLIC = 2\n",
            "store/__init__.py": "",
            "store/_aws.py": "def translate():\n    pass\n",
            "store/s3.py": "from jobs.store._aws import translate\n",  # inside its package: fine
            "taker.py": "from jobs.shared import _helper, PUBLIC\n",
            "reacher.py": "from jobs import shared\n\nvalue = shared._helper + shared.PUBLIC\n",
            "outsider.py": "from jobs.store._aws import translate\n",
            "dunder.py": "from jobs.shared import __doc__\nfrom jobs import shared\nname = shared.__name__\n",
        },
    )
    assert private_imports(modules) == [
        "jobs.outsider:1 imports the private module jobs.store._aws from outside jobs.store",
        "jobs.reacher:3 uses jobs.shared._helper",
        "jobs.taker:1 imports _helper from jobs.shared",
    ]


def test_a_function_over_the_limit_is_found_with_its_qualified_name(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    deeper = textwrap.indent(body, "    ") + "        y = 0\n"  # one line more, one level deeper
    modules = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "short.py": f"def fits():\n{body}",  # the def line and 59 more: 60 lines
            "long.py": f"class Run:\n    def step(self):\n{deeper}",
            "nested.py": f"def outer():\n    def inner():\n{deeper}    return inner\n",
        },
    )
    assert long_functions(modules) == {
        "jobs.long:Run.step": MAX_FUNCTION_LINES + 1,
        "jobs.nested:outer": MAX_FUNCTION_LINES + 3,
        "jobs.nested:outer.inner": MAX_FUNCTION_LINES + 1,
    }
