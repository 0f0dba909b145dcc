# SPDX-License-Identifier: BSD-3-Clause
"""Every C++ block a reader may copy compiles: the ```cpp fences of README.md, of the guides under docs/ (not the
archive, which keeps old pages as they were) and of the examples' READMEs, and those in the installed headers'
comments. All blocks go into one translation unit, compiled once with -fsyntax-only, so the check costs one
compiler run. The convention for fragments is in docs/contributing/extending.md ("Code in the docs"):

- a block is the body of a function, unless the HTML comment right above its fence says otherwise;
- <!-- compile: body(TYPE NAME, ...) --> gives that function parameters, for the names a fragment uses undeclared;
- <!-- compile: file --> compiles the block at namespace scope (whole functions, out-of-class definitions, main);
- #include lines move to the top of the unit; the public headers and common standard headers come first.

A #line directive before each block makes the compiler name the document's file and line. In a header, a fence
sits in a comment (/// ```cpp), and its marker on the comment lines above; a comment line indented like code but
outside a fence fails the check, so a new example cannot escape it by leaving the fence out.

    python3 tests/test_snippets.py --print     prints the unit; run as a test, CTest passes the compiler and flags."""
import glob
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
import unittest
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MARKDOWN = ["README.md", "docs/**/*.md", "examples/*/README.md"]
ARCHIVE = os.path.join("docs", "notes", "archive") + os.sep
HEADERS = ["comm/include/mcmclb/*.hpp", "comm/base/include/mcmclb/*.hpp", "walkers/include/mcmclb/*.hpp"]
# What every block may use without including it: the installed API and the standard headers its examples use.
PRELUDE = ["mpi.h", "mcmclb/walkers.hpp", "mcmclb/group_comm.hpp", "mcmclb/exact_sum.hpp", "mcmclb/mpi.hpp",
           "array", "cmath", "cstddef", "cstdint", "cstdio", "map", "memory", "span", "string", "vector"]
# A fragment declares what it shows and may leave it unused; every other warning stays an error.
FRAGMENT_FLAGS = ["-Wno-unused-variable", "-Wno-unused-but-set-variable", "-Wno-unused-parameter",
                  "-Wno-unused-local-typedefs"]

CPP_FENCE = re.compile(r"^(\s*)```\s*(cpp|c\+\+)\s*$")
MARKER = re.compile(r"<!--\s*compile:\s*(.*?)\s*-->", re.S)
COMMENT = re.compile(r"^\s*//+ ?")


class SnippetError(ValueError):
    """A block the convention cannot place: FILE:LINE: why."""


@dataclass
class Block:
    path: str  # relative to the repository root
    line: int  # the line of the block's first code line, from 1
    code: list  # its lines, dedented
    context: str = "body"  # body or file
    params: str = ""  # body(...)'s parameters


def parse_marker(text, where):
    """(context, params) from the HTML comments that end right above a fence: body() without a marker."""
    found = MARKER.findall(text)
    if not found:
        return "body", ""
    spec = " ".join(found[-1].split())
    if spec == "file":
        return "file", ""
    body = re.fullmatch(r"body\((.*)\)", spec)
    if body:
        return "body", body[1].strip()
    raise SnippetError(f"{where}: compile marker '{spec}' is neither 'file' nor 'body(PARAMETERS)'")


def comments_above(lines, fence):
    """The HTML comments on the lines right above index fence (prose above them, or a comment within prose, is not
    the block's marker)."""
    found, i = "", fence
    while i > 0 and lines[i - 1].strip():
        i -= 1
        text = "\n".join(lines[i:fence])
        if re.fullmatch(r"(\s*<!--.*?-->)+\s*", text, re.S):
            found = text
    return found


def fenced(path, lines):
    """Blocks of ```cpp fences in lines (already stripped of any comment prefix), numbered from 1."""
    out, i = [], 0
    while i < len(lines):
        m = CPP_FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise SnippetError(f"{path}:{i + 1}: a ```cpp fence that is never closed")
        context, params = parse_marker(comments_above(lines, i), f"{path}:{i + 1}")
        code = textwrap.dedent("\n".join(lines[i + 1:end])).split("\n")
        out.append(Block(path, i + 2, code, context, params))
        i = end + 1
    return out


def markdown_blocks(path, text):
    return fenced(path, text.split("\n"))


def header_comment_lines(text):
    """Each line of a header with its comment prefix (// or ///, and one space) removed, or None for code lines."""
    return [COMMENT.sub("", line, count=1) if COMMENT.match(line) else None for line in text.split("\n")]


def header_blocks(path, text):
    """Fences inside a header's comments. A fence and its marker must lie in one run of comment lines."""
    rows = header_comment_lines(text)
    out, i = [], 0
    while i < len(rows):
        if rows[i] is None:
            i += 1
            continue
        start = i
        while i < len(rows) and rows[i] is not None:
            i += 1
        for b in fenced(path, rows[start:i]):
            b.line += start
            out.append(b)
    return out


def unfenced_code(path, text):
    """FILE:LINE of comment lines outside any fence that read as code: indented two spaces or more beyond the comment's
    text and ending as a statement does (;, { or })."""
    rows, found, inside = header_comment_lines(text), [], False
    for n, row in enumerate(rows, 1):
        if row is None:
            inside = False
            continue
        if row.strip().startswith("```"):
            inside = not inside
            continue
        if not inside and re.match(r"^ {2,}\S.*[;{}]\s*$", row):
            found.append(f"{path}:{n}: code in a comment outside a ```cpp fence: {row.strip()}")
    return found


def repository_files(patterns, skip=None):
    paths = set()
    for pattern in patterns:
        for p in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            rel = os.path.relpath(p, ROOT)
            if not (skip and rel.startswith(skip)):
                paths.add(rel)
    return sorted(paths)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def every_block():
    blocks = []
    for rel in repository_files(MARKDOWN, ARCHIVE):
        blocks += markdown_blocks(rel, read(rel))
    for rel in repository_files(HEADERS):
        blocks += header_blocks(rel, read(rel))
    return blocks


def translation_unit(blocks):
    """One C++ source holding every block, each in a namespace of its own, #include lines first."""
    includes = [f"#include <{h}>" for h in PRELUDE]
    parts = []
    for n, b in enumerate(blocks):
        code = []
        for line in b.code:
            if line.lstrip().startswith("#include"):
                if line.strip() not in includes:
                    includes.append(line.strip())
                line = ""  # kept as a blank line, so the line numbers still match the document
            code.append(line)
        source = "\n".join(code)
        where = f'#line {b.line} "{b.path}"\n'
        if b.context == "file":
            parts.append(f"namespace mcmclb_snippet_{n} {{\n{where}{source}\n}}\n")
        else:
            parts.append(f"namespace mcmclb_snippet_{n} {{\n[[maybe_unused]] void block({b.params}) {{\n"
                         f"{where}{source}\n}}\n}}\n")
    return "// Every C++ block of the documents and the headers' comments (tests/test_snippets.py).\n" + \
        "\n".join(includes) + "\n\n" + "\n".join(parts)


def compile_unit(source):
    """Runs the compiler CTest names (MCMCLB_SNIPPET_CXX, its flags in MCMCLB_SNIPPET_FLAGS, a file of one argument
    a line) on source from standard input; returns (return code, output, seconds)."""
    cxx = os.environ.get("MCMCLB_SNIPPET_CXX")
    flags_file = os.environ.get("MCMCLB_SNIPPET_FLAGS")
    if not cxx or not flags_file:
        raise RuntimeError("MCMCLB_SNIPPET_CXX and MCMCLB_SNIPPET_FLAGS are unset: run through CTest "
                           "(ctest -R snippets), which passes the build's compiler and flags")
    flags = []
    with open(flags_file, encoding="utf-8") as f:
        for flag in (line.strip() for line in f):
            if flag in ("", "-D", "-I", "-I/usr/include"):  # an empty list's prefix; the compiler's own folder
                continue
            # Headers outside the repository (MPI's, GoogleTest's) as system headers, as CMake includes them.
            if flag.startswith("-I") and not os.path.abspath(flag[2:]).startswith(ROOT + os.sep):
                flag = "-isystem" + flag[2:]
            flags.append(flag)
    command = [cxx, *flags, *FRAGMENT_FLAGS, "-fsyntax-only", "-x", "c++", "-"]
    start = time.monotonic()
    r = subprocess.run(command, input=source, capture_output=True, text=True, cwd=ROOT, timeout=300)
    return r.returncode, " ".join(shlex.quote(c) for c in command) + "\n" + r.stdout + r.stderr, \
        time.monotonic() - start


class Extraction(unittest.TestCase):
    """The convention on small documents (no compiler)."""

    def test_a_block_is_a_function_body_unless_marked(self):
        doc = "Text.\n\n```cpp\nint x = 1;\n```\n\n<!-- compile: file -->\n```cpp\nint f() { return 1; }\n```\n"
        a, b = markdown_blocks("d.md", doc)
        self.assertEqual((a.context, a.params, a.line, a.code), ("body", "", 4, ["int x = 1;"]))
        self.assertEqual((b.context, b.line), ("file", 9))

    def test_body_parameters_and_a_marker_over_lines_among_other_comments(self):
        doc = ("<!-- compile: body(mcmclb::GroupComm& group,\n     double x) -->\n<!-- other: kept -->\n"
               "```cpp\nf();\n```\n")
        (b,) = markdown_blocks("d.md", doc)
        self.assertEqual((b.context, b.params), ("body", "mcmclb::GroupComm& group, double x"))

    def test_prose_above_is_not_a_marker(self):
        doc = "See <!-- compile: file --> here.\n```cpp\nf();\n```\n"
        self.assertEqual(markdown_blocks("d.md", doc)[0].context, "body")

    def test_an_unknown_marker_or_an_open_fence_is_an_error(self):
        with self.assertRaisesRegex(SnippetError, "d.md:2: compile marker 'main'"):
            markdown_blocks("d.md", "<!-- compile: main -->\n```cpp\nf();\n```\n")
        with self.assertRaisesRegex(SnippetError, "d.md:1: a ```cpp fence that is never closed"):
            markdown_blocks("d.md", "```cpp\nf();\n")

    def test_an_indented_block_is_dedented(self):
        (b,) = markdown_blocks("d.md", "- item:\n\n  ```cpp\n  if (x) {\n    f();\n  }\n  ```\n")
        self.assertEqual(b.code, ["if (x) {", "  f();", "}"])

    def test_header_fences_and_code_outside_them(self):
        header = ("/// Prose.\n/// <!-- compile: body(int n) -->\n/// ```cpp\n/// g(n);\n/// ```\n"
                  "int g(int n);\n///   h();\n")
        (b,) = header_blocks("h.hpp", header)
        self.assertEqual((b.line, b.params, b.code), (4, "int n", ["g(n);"]))
        self.assertEqual(unfenced_code("h.hpp", header), ["h.hpp:7: code in a comment outside a ```cpp fence: h();"])

    def test_the_unit_keeps_lines_and_hoists_includes(self):
        blocks = markdown_blocks("d.md", "```cpp\n#include <set>\nstd::set<int> s;\n```\n")
        unit = translation_unit(blocks)
        self.assertIn("#include <set>\n", unit)
        self.assertIn('#line 2 "d.md"\n\nstd::set<int> s;', unit)


class EveryBlock(unittest.TestCase):
    def test_no_code_outside_a_fence_in_the_headers(self):
        found = [f for rel in repository_files(HEADERS) for f in unfenced_code(rel, read(rel))]
        self.assertEqual(found, [], "\n".join(found))

    def test_every_block_compiles(self):
        blocks = every_block()
        # The README's skeleton, your-chains.md's two and the headers' examples at least: finding fewer means the
        # search broke, not that the documents lost their code.
        self.assertGreaterEqual(len(blocks), 5, [f"{b.path}:{b.line}" for b in blocks])
        rc, output, seconds = compile_unit(translation_unit(blocks))
        print(f"snippets: {len(blocks)} blocks from {len({b.path for b in blocks})} files compiled in {seconds:.1f} s")
        self.assertEqual(rc, 0, output)


class ExamplesInTheGuide(unittest.TestCase):
    """The examples use nothing of mcmclb the guide for them (docs/guide/your-chains.md) leaves unnamed, and are
    C++-only CMake projects, as the guide says a consumer can be."""

    GUIDE = os.path.join(ROOT, "docs", "guide", "your-chains.md")

    @staticmethod
    def unnamed(guide, sources):
        """The mcmclb headers, names (the last part of mcmclb::...) and group calls the sources use that no code span
        or fenced block of the guide holds."""
        fences = re.findall(r"```[a-z]*\n(.*?)```", guide, re.S)
        prose = re.sub(r"```[a-z]*\n.*?```", "", guide, flags=re.S)
        code = " ".join(re.findall(r"`([^`\n]+)`", prose) + fences)
        used = set()
        for text in sources:
            used |= set(re.findall(r'#include "(mcmclb/[a-z_]+\.hpp)"', text))
            used |= {m.split("::")[-1] for m in re.findall(r"mcmclb::[A-Za-z_:]+", text)}
            used |= set(re.findall(r"\bgroup\.([a-z_]+)\(", text))
        return sorted(n for n in used if not re.search(r"(?<![\w/])" + re.escape(n) + r"(?!\w)", code))

    def test_every_name_the_examples_use_is_in_the_guide(self):
        sources = []
        for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*", "*.cpp"))):
            with open(path) as f:
                sources.append(f.read())
        self.assertGreaterEqual(len(sources), 2)
        with open(self.GUIDE) as f:
            self.assertEqual(self.unnamed(f.read(), sources), [])
        # The check finds a name left out.
        example = 'mcmclb::mpi::run_main(); group.allreduce_sum(x);\n#include "mcmclb/mpi.hpp"'
        self.assertEqual(self.unnamed("`run_main` and `mcmclb/mpi.hpp`", [example]), ["allreduce_sum"])

    def test_the_examples_are_cxx_only_projects_as_the_guide_advises(self):
        with open(self.GUIDE) as f:
            self.assertIn("A CMake project enables C++ (C is not needed)", f.read())
        projects = sorted(glob.glob(os.path.join(ROOT, "examples", "*", "CMakeLists.txt")))
        self.assertGreaterEqual(len(projects), 2)
        for path in projects:
            with open(path) as f:
                project = re.search(r"^project\((.*?)\)", f.read(), re.M | re.S)
            self.assertIsNotNone(project, path)
            self.assertRegex(project.group(1), r"LANGUAGES CXX$", path)


if __name__ == "__main__":
    if sys.argv[1:] == ["--print"]:
        print(translation_unit(every_block()))
    else:
        unittest.main()
