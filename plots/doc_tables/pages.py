# SPDX-License-Identifier: BSD-3-Clause
"""What the tables' code reads in the pages (README.md and docs/**/*.md): which pages there are (default_files),
the generated blocks of a page (blocks) and its links relative to it (LINK). The command (documents.py) rewrites
the blocks; reproductions.py follows the blocks and links to the folders the pages cite. Both import this module,
and it imports neither, so the command, the registry of tables and the tables never import each other in a circle
(tests/test_imports.py)."""
import glob
import os
import re

from mcmclb_csv import InputError

from . import common

BEGIN = re.compile(r"^(?P<indent>[ \t]*)<!-- BEGIN generated: (?P<spec>.*?) -->[ \t]*$")
END = re.compile(r"^[ \t]*<!-- END generated -->[ \t]*$")
MARKER = re.compile(r"^[ \t]*<!-- (BEGIN|END) generated")
FENCE = re.compile(r"^[ \t]*(```|~~~)")


def blocks(lines, file):
    """(BEGIN index, END index, indent, name, args) of each generated block of a document's lines, outside fenced
    code (where a document may show a block as an example). InputError for a block without END, a BEGIN inside a
    block, an END outside one or a BEGIN without a name."""
    found, open_at, fenced = [], None, False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not MARKER.match(line):
            continue
        begin = BEGIN.match(line)
        if begin:
            if open_at is not None:
                raise InputError(f"{file}:{i + 1}: BEGIN inside the block of line {open_at[0] + 1} (allowed: each "
                                 f"block closed by <!-- END generated --> before the next)")
            spec = begin["spec"].split()
            if not spec:
                raise InputError(f"{file}:{i + 1}: a block without a table name (allowed: <!-- BEGIN generated: "
                                 f"NAME ARG... -->)")
            open_at = (i, begin["indent"], spec[0], spec[1:])
        elif END.match(line):
            if open_at is None:
                raise InputError(f"{file}:{i + 1}: END without a BEGIN (allowed: <!-- END generated --> closing a "
                                 f"block)")
            found.append((open_at[0], i) + open_at[1:])
            open_at = None
        else:
            raise InputError(f"{file}:{i + 1}: malformed marker (allowed: <!-- BEGIN generated: NAME ARG... --> "
                             f"and <!-- END generated --> alone on their lines)")
    if open_at is not None:
        raise InputError(f"{file}:{open_at[0] + 1}: block {open_at[2]} has no END (allowed: a line "
                         f"<!-- END generated --> after its table)")
    return found


# A link relative to the page that holds it: neither a URL (scheme:), nor an anchor alone, nor an absolute path.
LINK = re.compile(r"\]\((?![a-z]+:|#|/)(?P<path>[^)#\s]+)(?P<anchor>#[^)]*)?\)")


def default_files():
    """The pages the command reads when it is named none: README.md and every page under docs/, under the root of
    now (a test may move it)."""
    return [os.path.join(common.ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(common.ROOT, "docs", "**", "*.md"), recursive=True))
