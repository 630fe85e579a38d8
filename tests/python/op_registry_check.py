"""The op kinds are declared once, in ir's op table (its golden rendering,
tests/golden/rule_table.txt, is held equal to it by the C++ suite). This
check holds the two PyTorch importers to it: the torch.export importer's
IMPORTED_KINDS and NOT_IMPORTED (synth/python/shardsynth/aten_table.py)
cover the table exactly, and its code names every kind it declares; the fx
exporter's TABLE_KINDS (examples/export_fx.py) is the table. Pure Python,
no torch: files are read as data.

usage: op_registry_check.py REPO_ROOT"""
import ast
import glob
import os
import re
import sys


def table_kinds(root: str) -> set:
    with open(os.path.join(root, "tests/golden/rule_table.txt")) as f:
        return {line.split(":", 1)[0] for line in f if ":" in line}


def assigned_value(path: str, name: str):
    """The literal a module assigns to `name`, read without running the module."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{path}: no {name}")


def main() -> int:
    root = sys.argv[1]
    kinds = table_kinds(root)
    package = os.path.join(root, "synth/python/shardsynth")
    imported = assigned_value(os.path.join(package, "aten_table.py"), "IMPORTED_KINDS")
    not_imported = assigned_value(os.path.join(package, "aten_table.py"), "NOT_IMPORTED")
    fx_kinds = assigned_value(os.path.join(root, "examples/export_fx.py"), "TABLE_KINDS")
    code = "".join(open(p).read() for p in sorted(glob.glob(os.path.join(package, "*.py")))
                   if not p.endswith("aten_table.py"))
    table_code = open(os.path.join(package, "aten_table.py")).read().split("IMPORTED_KINDS = {")[0]
    failures = []
    for kind in sorted(kinds - set(imported) - set(not_imported)):
        failures.append(f"op kind '{kind}' has no importer mapping (aten_table.py IMPORTED_KINDS or NOT_IMPORTED)")
    for kind in sorted((set(imported) | set(not_imported)) - kinds):
        failures.append(f"aten_table.py declares '{kind}', which the op table does not have")
    for kind in sorted(set(imported) & set(not_imported)):
        failures.append(f"aten_table.py declares '{kind}' both imported and not imported")
    for kind in sorted(imported):
        if not re.search(r'"%s"' % re.escape(kind), code + table_code):
            failures.append(f"aten_table.py declares '{kind}' imported, but no importer code names it")
    for kind in sorted(kinds ^ set(fx_kinds)):
        failures.append(f"examples/export_fx.py TABLE_KINDS and the op table differ on '{kind}'")
    for line in failures:
        print(line)
    print(f"{len(kinds)} op kinds: {len(imported)} imported, {len(not_imported)} declared not imported; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
