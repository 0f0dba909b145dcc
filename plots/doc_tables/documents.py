# SPDX-License-Identifier: BSD-3-Clause
"""Tables that cannot drift: each table of numbers in the Markdown documents is generated from committed CSVs, in a
marked block that this script rewrites.

    plots/doc_tables.py [--check] [FILE.md ...]

A block is the lines between

    <!-- BEGIN generated: NAME ARG... -->
    <!-- END generated -->

where NAME is one of the tables registered in registry.py (TABLES) and each ARG is a results folder relative to the
repository root (docs/data/steal-vs-regroup-seeds-1024) or an option KEY=VALUE of that table. Without --check every
block is rewritten in place with what its CSVs give now (each changed file replaced at once: written beside it,
then renamed); with --check nothing is written, one line is printed per block that differs, and the exit code is
1 if any does. Default files: README.md and docs/**/*.md of the repository.

Only the functions in TABLES run: a document names a table and its folders, never a command. An unknown name, a
folder outside the repository, a missing or malformed CSV, a bad option or a block without its END marker is one
line `doc_tables.py: FILE:LINE: problem (allowed ...)` and exit 2, before any file is written."""
import argparse
import os

from mcmclb_csv import ArgumentParser, InputError, fail, open_regular, write_text_atomically

from . import common
from .common import Inputs
from .pages import LINK, blocks, default_files
from .registry import generate

# The command's name in its usage and its one-line errors, whichever module prints them.
PROG = "doc_tables.py"

def relink(text, folder):
    """text with each link a generator wrote relative to the repository root (docs/x.csv) made relative to folder,
    the document's own (relative to the root), as a reader's viewer resolves it."""
    if not folder or folder == ".":
        return text

    def rewrite(m):
        path = m["path"]
        # Only a path from the root (its first folder is one of the root's); one already relative to the document
        # (../x, or a folder beside it) is kept.
        if path.startswith(".") or not os.path.exists(os.path.join(common.ROOT, path.split("/")[0])):
            return m[0]
        return f"]({os.path.relpath(path, folder)}{m['anchor'] or ''})"
    return LINK.sub(rewrite, text)


def regenerate(text, file, folder=None):
    """(the document with every block rewritten, [(line, name) of each block that changed]); folder: the
    document's folder relative to the root, to which the links in generated text are made relative."""
    lines = text.split("\n")
    out, stale, done = [], [], 0
    for begin, end, indent, name, args in blocks(lines, file):
        try:
            table = [indent + line for line in relink(generate(name, args), folder).split("\n")]
        except InputError as e:
            raise InputError(f"{file}:{begin + 1}: {e}") from None
        out += lines[done:begin + 1] + table
        if lines[begin + 1:end] != table:
            stale.append((begin + 1, name))
        done = end
    return "\n".join(out + lines[done:]), stale


def replace(path, text):
    """Writes text to path at once, keeping its mode (mcmclb_csv.write_text_atomically)."""
    write_text_atomically(path, text)


def main(argv=None):
    parser = ArgumentParser(prog=PROG, description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; print each block that differs from its CSVs, exit 1 if any")
    parser.add_argument("--bounds", action="store_true",
                        help="write the reproductions' bounds (docs/data/reproductions/bounds.csv) from the pages now, "
                             "stated at this UTC time, and nothing else: run it before a rerun, never after")
    args = parser.parse_args(argv)
    if args.bounds:
        from datetime import datetime, timezone

        from .bounds import derive_bounds, write_bounds
        Inputs.cache.clear()
        try:
            write_bounds(derive_bounds(datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")))
        except (InputError, OSError) as e:
            fail(PROG, str(e))
        return 0
    files = args.files or default_files()
    Inputs.cache.clear()
    results = []  # (path, shown name, old text, new text, stale blocks)
    try:
        for path in files:
            shown = os.path.relpath(path, common.ROOT) if not args.files else path
            with open_regular(path, "a Markdown file", encoding="utf-8", newline="") as f:
                try:
                    text = f.read()
                except UnicodeDecodeError:
                    raise InputError(f"{shown}: not UTF-8 text (allowed: a Markdown file)") from None
            folder = os.path.relpath(os.path.dirname(os.path.realpath(path)), os.path.realpath(common.ROOT))
            results.append((path, shown, text) + regenerate(text, shown, folder))
    except InputError as e:
        fail(PROG, str(e))
    if args.check:
        stale = [f"{shown}:{line}: block {name} differs from its CSVs; run plots/doc_tables.py"
                 for _, shown, _, _, blocks_ in results for line, name in blocks_]
        for line in stale:
            print(line)
        return 1 if stale else 0
    for path, shown, old, new, blocks_ in results:
        if new != old:
            try:
                replace(path, new)
            except OSError as e:
                fail(PROG, f"{shown}: cannot be rewritten ({e.strerror}; allowed: a writable file in a writable "
                               f"folder)")
            print(f"rewrote {len(blocks_)} block(s) in {shown}")
    return 0

