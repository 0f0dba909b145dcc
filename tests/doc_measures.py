# SPDX-License-Identifier: BSD-3-Clause
"""How a Markdown document reads, measured the same way wherever a test holds a document to its limits (the README in
test_front_door, the guides, reference pages and results in test_readability): its blocks, the prose a reader reads,
sentences, paragraph lines at the width the documents are written to, table cells, words of prose and words read
(prose and tables, generated blocks included).

    python3 tests/doc_measures.py FILE.md...

prints, for each file, its words read and of prose, its longest sentence and every sentence, paragraph and table
cell over the limits of test_readability, with its line."""
import os
import re
import sys
import textwrap

MAX_SENTENCE_WORDS, MAX_PARAGRAPH_LINES, MAX_CELL_WORDS = 40, 6, 30
# A paragraph's lines as a reader sees them: wrapped at the width the documents are written to.
WIDTH = 120


def numbered_blocks(text):
    """(kind, lines, first line number) of a Markdown text in order: kind is code, generated, table, heading, image,
    comment or prose; a list item starts a prose block of its own. Fenced code (``` or ~~~, indented in a list item
    or not), a generated block and an HTML comment each run from their opening line to their closing one."""
    out, kind, lines, start = [], None, [], 0

    def flush():
        nonlocal kind, lines
        if lines:
            out.append((kind, lines, start))
        kind, lines = None, []
    rows = text.splitlines()
    i = 0
    while i < len(rows):
        line, stripped = rows[i], rows[i].strip()
        fence = re.match(r"(```|~~~)", stripped)
        if fence or stripped.startswith("<!-- BEGIN generated") or (stripped.startswith("<!--") and "-->" not in
                                                                     stripped):
            flush()
            name, closed = (("code", lambda s: s.startswith(fence[1])) if fence else
                            ("generated", lambda s: s.startswith("<!-- END generated")) if "BEGIN generated" in
                            stripped else ("comment", lambda s: "-->" in s))
            j = i + 1
            while j < len(rows) and not closed(rows[j].strip()):
                j += 1
            out.append((name, rows[i:j + 1], i + 1))
            i = j + 1
            continue
        if not stripped:
            flush()
        else:
            this = ("table" if stripped.startswith("|") else "heading" if line.startswith("#") else
                    "image" if stripped.startswith("![") else "comment" if stripped.startswith("<!--") else "prose")
            if this != kind or re.match(r"^\s*([-*]|\d+\.) ", line):
                flush()
                kind, start = this, i + 1
            lines.append(line)
        i += 1
    flush()
    return out


def blocks(text):
    """(kind, lines) of each block of numbered_blocks."""
    return [(kind, lines) for kind, lines, _ in numbered_blocks(text)]


def visible(line):
    """A Markdown line as read: link text without its target, no emphasis marks (code marks stay: a sentence may
    start with a code span)."""
    line = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", line)
    return re.sub(r"[*_]", "", line)


def inner_blocks(lines, start):
    """numbered_blocks of a generated block's lines (markers included), numbered in the document."""
    return [(k, inner, start + n) for k, inner, n in numbered_blocks("\n".join(lines[1:-1]))]


def numbered_prose(text, generated=True):
    """(visible lines, first line number) of each prose paragraph; with generated, the prose inside generated
    blocks (bullets and sentences a generator writes) counts too."""
    out = []
    for kind, lines, start in numbered_blocks(text):
        if kind == "prose":
            out.append(([visible(line) for line in lines], start))
        elif kind == "generated" and generated:
            out += [([visible(line) for line in inner], n) for k, inner, n in inner_blocks(lines, start)
                    if k == "prose"]
    return out


def prose_of(text, generated=True):
    """The prose paragraphs of a document (each a list of visible lines)."""
    return [p for p, _ in numbered_prose(text, generated)]


def prose_words(text):
    """Words of prose: paragraphs and list items (not their markers), generated ones included; headings, tables,
    code, images and HTML comments are not counted."""
    return sum(len(re.sub(r"^\s*([-*]|\d+\.) ", "", line).split()) for p in prose_of(text) for line in p)


def table_words(text):
    """Words in table cells (separator rows and the bars between cells not counted), generated tables included."""
    return sum(len(cell.split()) for cell, _ in numbered_cells(text))


def reader_words(text):
    """Words a reader reads: prose (prose_words) and table cells (table_words), in generated blocks too; headings,
    code, images and HTML comments are not counted."""
    return prose_words(text) + table_words(text)


def sentences(paragraph):
    text = " ".join(line.strip().lstrip("-* ").strip() for line in paragraph)
    # A sentence ends at . ! or ? before a space and a capital, a bracket, a mark or the end (not at "Sect. 4",
    # "e.g." or a decimal point).
    return [s for s in re.split(r"(?<!\bSect)(?<!\be\.g)(?<!\bi\.e)(?<!\bFig)(?<!\bet al)[.!?:](?=\s+[A-Z*\[(`]|\s*$)",
                                text) if s.strip()]


def wrapped_lines(paragraph):
    return len(textwrap.wrap(" ".join(line.strip() for line in paragraph), WIDTH))


def cells(row):
    """The cells of a table row: split at each | outside code spans, an escaped \\| kept inside its cell."""
    found, cell, code = [], "", False
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cell += "|"
            i += 2
            continue
        if c == "`":
            code = not code
        if c == "|" and not code:
            found.append(cell)
            cell = ""
        else:
            cell += c
        i += 1
    if cell.strip():
        found.append(cell)
    return [c.strip() for c in found]


def numbered_cells(text):
    """(visible cell text, line number) of each cell of each table, in generated blocks too; separator rows are
    skipped."""
    out = []

    def take(lines, start):
        for n, row in enumerate(lines, start):
            if re.match(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$", row):
                continue
            out.extend((visible(cell), n) for cell in cells(row))
    for kind, lines, start in numbered_blocks(text):
        if kind == "table":
            take(lines, start)
        elif kind == "generated":
            for k, inner, n in inner_blocks(lines, start):
                if k == "table":
                    take(inner, n)
    return out


def problems(text):
    """[(line, what)] of each sentence over MAX_SENTENCE_WORDS, paragraph over MAX_PARAGRAPH_LINES and table cell
    over MAX_CELL_WORDS."""
    found = []
    for paragraph, start in numbered_prose(text):
        for s in sentences(paragraph):
            if len(s.split()) > MAX_SENTENCE_WORDS:
                found.append((start, f"a sentence of {len(s.split())} words: {s.strip()[:90]}..."))
        if wrapped_lines(paragraph) > MAX_PARAGRAPH_LINES:
            found.append((start, f"a paragraph of {wrapped_lines(paragraph)} lines: {paragraph[0].strip()[:70]}..."))
    for cell, line in numbered_cells(text):
        if len(cell.split()) > MAX_CELL_WORDS:
            found.append((line, f"a table cell of {len(cell.split())} words: {cell[:80]}..."))
    return found


def longest_sentence(text):
    """(words, sentence) of the longest sentence of the document's prose, or (0, '')."""
    every = [(len(s.split()), s.strip()) for p in prose_of(text) for s in sentences(p)]
    return max(every, default=(0, ""))


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        words, sentence = longest_sentence(text)
        print(f"{path}: {reader_words(text)} words read ({prose_words(text)} of prose, {table_words(text)} in tables), "
              f"longest sentence {words} words")
        for line, what in problems(text):
            print(f"  {path}:{line}: {what}")


if __name__ == "__main__":
    main(sys.argv[1:] or [os.path.join("docs", "guide", f) for f in sorted(os.listdir(os.path.join("docs", "guide")))])
