# SPDX-License-Identifier: BSD-3-Clause
"""No circle among the repository's own Python modules: module A importing B that imports (perhaps through others)
A again. Python then hands one of them a half-run module, and an import moved into a function only hides the
circle until a new caller trips over it. Every import counts, at the top of a file or inside a function.

A name is looked up as Python would: a relative import in its package; an absolute one in the file's own top
folder (a script's folder is on the path), then in the folders the repository's code puts on the path (MODULE_PATH).
A name found in none is the standard library's or an installed package's, outside the graph."""
import ast
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The folders the scripts and tests add to sys.path: the plot scripts' modules, and the tests' helpers.
MODULE_PATH = ("plots", "tests")


def python_files(root):
    """The repository's .py files, tracked or new (not ignored), as paths relative to root."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return sorted({f for f in out.split("\n") if f and os.path.isfile(os.path.join(root, f))})


def top_folder(root, path):
    """The folder path's package tree hangs from (the first folder upward without an __init__.py), and path's
    dotted name below it: ("plots", "doc_tables.common") for plots/doc_tables/common.py."""
    folder, parts = os.path.dirname(path), [os.path.splitext(os.path.basename(path))[0]]
    while folder and os.path.isfile(os.path.join(root, folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if parts[-1] == "__init__":
        parts.pop()
    return folder, ".".join(parts)


def module_file(root, folder, name):
    """The file of dotted name under folder (a package's __init__.py before a module of the same name, as Python
    looks), or None."""
    base = os.path.join(folder, *name.split("."))
    for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
        if os.path.isfile(os.path.join(root, candidate)):
            return os.path.normpath(candidate)
    return None


def imports(root, path, search=MODULE_PATH):
    """[(line, file)] of every repository module path imports, wherever the import stands. Importing a.b runs a
    first, so a package's __init__.py counts too, except the packages path itself lies in (already running)."""
    folder, dotted = top_folder(root, path)
    package = dotted.split(".") if path.endswith("__init__.py") else dotted.split(".")[:-1]
    with open(os.path.join(root, path), encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)

    def find(name):
        """(folder, name) where an absolute name is found: path's top folder first, then the search folders."""
        for where in (folder,) + tuple(search):
            if module_file(root, where, name.split(".")[0]):
                return where
        return None

    def modules(where, name, line):
        parts = name.split(".")
        found = []
        for i in range(1, len(parts) + 1):
            prefix = parts[:i]
            if where == folder and prefix == package[:i]:
                continue  # a package path lies in
            file = module_file(root, where, ".".join(prefix))
            if file is None:
                break
            found.append((line, file))
        return found

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                where = find(alias.name)
                if where is not None:
                    found += modules(where, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name, where = ".".join(base + (node.module.split(".") if node.module else [])), folder
            else:
                name, where = node.module, find(node.module)
            if where is None:
                continue
            found += modules(where, name, node.lineno)
            # from package import module: the module runs too
            for alias in node.names:
                file = module_file(root, where, f"{name}.{alias.name}")
                if file is not None:
                    found.append((node.lineno, file))
    return found


def graph(root, files, search=MODULE_PATH):
    """{file: {imported file: first line importing it}}."""
    edges = {}
    for path in files:
        mine = edges.setdefault(path, {})
        for line, file in imports(root, path, search):
            if file != path:
                mine.setdefault(file, line)
    return edges


def circles(edges):
    """One circle per group of modules that all reach each other, as ([file:line importing the next, ..., first
    file], [every file of the group]): the shortest circle through the group's first file, and the whole group."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    found = []
    for group in groups:
        start = min(group)
        # The shortest way from start back to itself inside the group.
        came_from, frontier = {start: None}, [start]
        while frontier and start not in [w for v in frontier for w in edges[v]]:
            step = []
            for v in frontier:
                for w in sorted(edges[v]):
                    if w in group and w not in came_from:
                        came_from[w] = v
                        step.append(w)
            frontier = step
        last = next(v for v in frontier if start in edges[v])
        chain = [last]
        while came_from[chain[0]] is not None:
            chain.insert(0, came_from[chain[0]])
        circle = [f"{v}:{edges[v][w]}" for v, w in zip(chain, chain[1:] + [start])] + [start]
        found.append((circle, sorted(group)))
    return sorted(found)


class Imports(unittest.TestCase):
    def test_no_module_imports_itself_through_others(self):
        files = python_files(ROOT)
        edges = graph(ROOT, files)
        # The look-up reaches across folders, or the test would pass on a graph without edges.
        self.assertIn("plots/doc_tables/__init__.py", edges["plots/doc_tables.py"])
        self.assertIn("plots/mcmclb_csv.py", edges["plots/doc_tables/common.py"])
        self.assertIn("plots/doc_tables/__init__.py", edges["tests/test_doc_tables.py"])
        found = circles(edges)
        if found:
            self.fail("import circles (each file:line imports the next; then every module of its group):\n" +
                      "\n".join(f"{' -> '.join(c)}\n    group: {', '.join(g)}" for c, g in found))

    def test_a_circle_through_a_function_is_found(self):
        """A package whose b imports a inside a function, a imports b at its top, and c imports its own package:
        the first is a circle, the second is not."""
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "tools", "pkg"))
            for name, text in (("tools/pkg/__init__.py", "from .a import x\n"),
                               ("tools/pkg/a.py", "import os\nfrom .b import y\nx = 1\n"),
                               ("tools/pkg/b.py", "def y():\n    from . import a\n    return a\n"),
                               ("tools/pkg/c.py", "from . import b\nimport pkg.a\n"),
                               ("tools/run.py", "from pkg import c\n")):
                with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                    f.write(text)
            files = ["tools/pkg/__init__.py", "tools/pkg/a.py", "tools/pkg/b.py", "tools/pkg/c.py", "tools/run.py"]
            edges = graph(root, files, search=())
            self.assertEqual(edges["tools/run.py"], {"tools/pkg/__init__.py": 1, "tools/pkg/c.py": 1})
            self.assertEqual(circles(edges), [(["tools/pkg/a.py:2", "tools/pkg/b.py:2", "tools/pkg/a.py"],
                                               ["tools/pkg/a.py", "tools/pkg/b.py"])])


if __name__ == "__main__":
    unittest.main()
