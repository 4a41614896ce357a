#!/usr/bin/env python3
"""The layers of Cohort's package, drawn from Package.swift and checked against Docs/Architecture.md.

    python3 Scripts/architecture.py            print the layer diagram of Package.swift as it is
    python3 Scripts/architecture.py --write    put that diagram into Docs/Architecture.md (`make docs`)
    python3 Scripts/architecture.py --check    exit 1, naming each problem, when
        - a target depends on a target or another package's product that its row in the document's
          "Allowed dependencies" table does not list,
        - a target of Package.swift has no row there, or two (or a row names a target that does not exist),
        - a target's source folder is missing or holds no Swift file,
        - a source file imports one of the package's modules that its target does not depend on directly,
        - the diagram in the document is not the one Package.swift gives.

--package-json FILE reads `swift package dump-package` output from FILE instead of running it,
--document FILE checks another copy of the document, and --root DIR reads the sources under DIR: the
tests use them to show that what is forbidden is caught.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENT = os.path.join(ROOT, "Docs", "Architecture.md")
BEGIN = "<!-- layers: drawn by `python3 Scripts/architecture.py --write` from Package.swift; do not edit by hand -->"
END = "<!-- end of layers -->"


def load_package(path):
    if path:
        with open(path) as handle:
            return json.load(handle)
    # A scratch folder of its own: under `swift test` the package's own is locked by the test run.
    with tempfile.TemporaryDirectory() as scratch:
        output = subprocess.run([os.environ.get("SWIFT", "swift"), "package", "--scratch-path", scratch, "dump-package"], cwd=ROOT, check=True,
                                capture_output=True, text=True)
    return json.loads(output.stdout)


def dependencies(target, local):
    """The target's dependencies: the package's own targets, and products of other packages (as PACKAGE/NAME)."""
    own, external = [], []
    for dependency in target.get("dependencies", []):
        kind, value = next(iter(dependency.items()))
        name = value[0]
        if kind == "product":
            external.append(f"{value[1]}/{name}" if value[1] else name)
        elif name in local:
            own.append(name)
        else:
            external.append(name)
    return own, external


def layers(graph):
    """Each target's layer: 0 for one that depends on none of the package's targets, else one above its highest dependency."""
    level = {}

    def visit(name, path=()):
        if name in path:
            raise SystemExit("error: E_MALFORMED: Package.swift has a dependency cycle: " + " -> ".join(path + (name,)))
        if name not in level:
            level[name] = 1 + max((visit(other, path + (name,)) for other in graph[name]), default=-1)
        return level[name]

    for name in graph:
        visit(name)
    return level


def diagram(package):
    targets = package["targets"]
    local = {target["name"] for target in targets}
    graph, externals, kinds = {}, {}, {}
    for target in targets:
        graph[target["name"]], externals[target["name"]] = dependencies(target, local)
        kinds[target["name"]] = target["type"]
    level = layers(graph)
    width = max(len(name) for name in graph if kinds[name] != "test")
    lines = ["```", "layer  target" + " " * (width - 6) + "  depends on (the package's targets; then, in brackets, system libraries and other packages)"]
    for name in sorted(graph, key=lambda name: (level[name], name)):
        if kinds[name] == "test":
            continue
        own = " ".join(sorted(graph[name], key=lambda other: (level[other], other)))
        outside = " ".join(sorted(externals[name]))
        text = own + (f" [{outside}]" if outside else "")
        lines.append(f"{level[name]:>5}  {name.ljust(width)}  {text or '-'}".rstrip())
    lines.append("```")
    return "\n".join(lines), graph, kinds, externals


def allowed_table(document, path):
    """The rows of the document's "Allowed dependencies" table: target -> the targets it may depend on."""
    match = re.search(r"^## Allowed dependencies\n(.*?)(?=^## |\Z)", document, re.M | re.S)
    if not match:
        raise SystemExit(f"error: E_MALFORMED: {path} has no '## Allowed dependencies' section (add the table; see Docs/Architecture.md)")
    rows, twice = {}, []
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not line.startswith("|") or cells[0] in ("target", "") or set(cells[0]) <= set("-: "):
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            if name in rows:
                twice.append(name)
            rows[name] = set(re.findall(r"`([^`]+)`", cells[1]))
    return rows, twice


# `import X`, `@testable import X`, `@_implementationOnly import X`, `private import X`,
# `import struct X.Y`, indented (under `#if canImport`), with attributes in any number.
IMPORT = re.compile(r"^[ \t]*(?:@\w+(?:\([^)]*\))?[ \t]+)*(?:(?:public|package|internal|fileprivate|private)[ \t]+)?"
                    r"import[ \t]+(?:(?:typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?(\w+)", re.M)


def module(name):
    """The module a target builds: its name with `-` as `_`."""
    return name.replace("-", "_")


def imports_problems(package, graph, root):
    problems = []
    modules = {module(name): name for name in graph}
    for target in package["targets"]:
        name = target["name"]
        if target["type"] == "system":
            continue
        folder = os.path.join(root, target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name))
        sources = []
        for directory, _, files in os.walk(folder):
            sources += [os.path.join(directory, file) for file in sorted(files) if file.endswith(".swift")]
        if not sources and not any(file.endswith((".c", ".h")) for _, _, files in os.walk(folder) for file in files):
            problems.append(f"{name}: no sources in {os.path.relpath(folder, root)}")
        for path in sources:
            with open(path, encoding="utf-8") as handle:
                for imported in IMPORT.findall(handle.read()):
                    other = modules.get(imported)
                    if other and other != name and other not in graph[name]:
                        problems.append(f"{os.path.relpath(path, root)} imports {imported}, which {name} does not depend on in Package.swift")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--package-json")
    parser.add_argument("--document", default=DOCUMENT)
    parser.add_argument("--root", default=ROOT)
    options = parser.parse_args()

    package = load_package(options.package_json)
    drawn, graph, kinds, externals = diagram(package)
    if not (options.write or options.check):
        print(drawn)
        return 0
    with open(options.document, encoding="utf-8") as handle:
        document = handle.read()
    block = re.compile(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), re.S)
    if options.write:
        if not block.search(document):
            raise SystemExit(f"error: E_MALFORMED: {options.document} has no layers block (add the two marker lines)")
        document = block.sub(lambda _: BEGIN + "\n" + drawn + "\n" + END, document)
        with open(options.document, "w", encoding="utf-8") as handle:
            handle.write(document)
        return 0

    problems = []
    allowed, twice = allowed_table(document, options.document)
    problems += [f"{name} has two rows in the 'Allowed dependencies' table" for name in twice]
    for name in sorted(graph):
        if kinds[name] == "test":
            continue
        if name not in allowed:
            problems.append(f"{name} has no row in the 'Allowed dependencies' table (say what it may depend on)")
            continue
        products = [external.split("/")[-1] for external in externals[name]]
        for other in sorted(set(graph[name] + products) - allowed[name]):
            problems.append(f"{name} depends on {other}, which the 'Allowed dependencies' table forbids it")
    for name in sorted(set(allowed) - set(graph)):
        problems.append(f"the 'Allowed dependencies' table names {name}, which is not a target of Package.swift")
    problems += imports_problems(package, graph, options.root)
    found = block.search(document)
    if not found:
        problems.append("the layers block is missing from the document")
    elif found.group(1) != drawn:
        problems.append("the layers diagram is not Package.swift's as it is (run `make docs`)")
    for problem in problems:
        print("error: E_MALFORMED: " + problem, file=sys.stderr)
    if not problems:
        print(f"ok: {len(graph)} targets, every dependency allowed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
