# SPDX-License-Identifier: BSD-3-Clause
"""The pages a newcomer reads after the README, held to the README's measures: on every page under docs/ but the
archive, no sentence over 40 words, no paragraph over 6 lines at 120 columns and no table cell over 30 words
(generated blocks included: their generator writes short sentences too). Words are counted as a reader reads them
(doc_measures.reader_words): prose and table cells, generated blocks included; code, headings, images and HTML
comments aside. Each explanation page holds at most 3,000 such words, and docs/ outside the archive and the data
folders' READMEs under 60,300. Each how-to holds at most 2,500 such words. The map (docs/README.md) links every
page. The measures are doc_measures', which the README's test shares; `python3 tests/doc_measures.py FILE.md` lists
one page's counts and offences with their lines."""
import glob
import os
import re
import unittest

import doc_measures

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# A how-to (docs/guide/) is read through while doing: 2,500 words at most, as a reader counts them (prose, tables
# and generated blocks; code aside).
MAX_GUIDE_WORDS = 2500
# An explanation page, read to understand, gives the answer and the table that carries it: 3,000 words read at most,
# tables included. The rest of its evidence stands in its data folder's README (docs/data/<study>/README.md).
MAX_EXPLANATION_WORDS = 3000
# What a reader may be sent to and reads through: everything under docs/ but the archive (history, kept for the
# record) and the data folders' READMEs (evidence beside the CSVs, looked up from a page's link as the CSVs are).
MAX_DOCS_WORDS = 60000
DATA = os.path.join("docs", "data") + os.sep
MAP = os.path.join("docs", "README.md")


def pages():
    """The pages held to the limits, relative to the root: every page under docs/ but the archive, which keeps
    history as it was written."""
    found = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [os.path.relpath(p, ROOT) for p in found
            if not os.path.relpath(p, ROOT).startswith(os.path.join("docs", "notes", "archive") + os.sep)]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


class Readable(unittest.TestCase):
    def test_sentences_paragraphs_and_cells(self):
        self.assertTrue(pages())
        for path in pages():
            with self.subTest(page=path):
                found = doc_measures.problems(read(path))
                self.assertEqual([], [f"{path}:{line}: {what}" for line, what in found])

    def test_each_guide_fits_its_budget(self):
        guides = [p for p in pages() if p.startswith(("docs/guide/", "docs/explanation/"))]
        self.assertTrue(guides)
        for path in guides:
            with self.subTest(page=path):
                most = MAX_GUIDE_WORDS if path.startswith("docs/guide/") else MAX_EXPLANATION_WORDS
                words = doc_measures.reader_words(read(path))
                self.assertLessEqual(words, most, f"{path}: {words} words read (allowed: at most {most}; move "
                                     f"evidence to its data folder's README, reference tables to docs/reference, "
                                     f"history to docs/notes/archive)")

    def test_the_docs_fit_their_budget(self):
        """Words read (prose, tables and generated blocks; code aside) of every page under docs/ outside
        docs/notes/archive and the data folders' READMEs; both counts are printed, so a change that grows the docs
        shows by how much."""
        files = [p for p in pages() if not p.startswith(DATA)]
        data = [p for p in pages() if p.startswith(DATA)]
        self.assertTrue(files)
        words = sum(doc_measures.reader_words(read(p)) for p in files)
        print(f"docs: {words} words read in {len(files)} pages outside docs/notes/archive and docs/data (allowed: "
              f"under {MAX_DOCS_WORDS}); {sum(doc_measures.reader_words(read(p)) for p in data)} in {len(data)} "
              f"data folders' READMEs")
        self.assertLess(words, MAX_DOCS_WORDS)

    def test_the_map_lists_every_page(self):
        """Every page under docs/ outside the archive is linked from the map, docs/README.md (a link to a folder
        names its README.md)."""
        listed = map_links(read(MAP), os.path.dirname(MAP))
        self.assertEqual([p for p in pages() if p != MAP and p not in listed], [],
                         "pages the map does not link (add them to docs/README.md)")


def map_links(text, folder):
    """The pages (relative to the root) that a Markdown text in folder links, outside code: a link to a folder names
    its README.md; anchors and external links are left out."""
    found = set()
    for kind, lines in doc_measures.blocks(text):
        if kind == "code":
            continue
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", "\n".join(lines)):
            if re.match(r"[a-z]+:", target):
                continue
            path = os.path.normpath(os.path.join(folder, target))
            found.add(os.path.join(path, "README.md") if target.endswith("/") else path)
    return found


class TheMeasuresCatch(unittest.TestCase):
    """Each limit fails on a page that breaks it and passes on one that keeps it."""

    def test_a_long_sentence(self):
        long = "A " + "word " * 40 + "ends here."
        self.assertEqual(len(doc_measures.problems(f"# T\n\n{long}\n")), 1)
        self.assertEqual(doc_measures.problems("# T\n\nShort. Also short.\n"), [])

    def test_a_long_paragraph(self):
        para = "\n".join(["Words. " * 16] * 7)
        self.assertIn("paragraph of", doc_measures.problems(f"# T\n\n{para}\n")[0][1])
        # The same lines as list items are seven paragraphs of one line each.
        self.assertEqual(doc_measures.problems("\n".join("- " + "Words. " * 16 for _ in range(7))), [])

    def test_a_long_cell_in_a_generated_block(self):
        cell = "word " * 31
        page = f"# T\n\n<!-- BEGIN generated: x -->\n| a | b |\n|---|---|\n| {cell} | 1 |\n<!-- END generated -->\n"
        found = doc_measures.problems(page)
        self.assertEqual([line for line, _ in found], [6])
        # A | inside a code span or escaped does not end a cell.
        self.assertEqual(doc_measures.cells("| `a|b` | c \\| d | e |"), ["`a|b`", "c | d", "e"])

    def test_words_of_prose_leave_out_tables_code_and_comments(self):
        page = ("# Title words\n\nOne two three.\n\n| a b | c d |\n|---|---|\n| e f | g h |\n\n```\nx y z\n```\n\n"
                "<!-- a comment\nover two lines -->\n\n- four five\n")
        self.assertEqual(doc_measures.prose_words(page), 5)

    def test_a_tables_words_are_read(self):
        # Cells count, the bars between them and the separator row do not; prose beside the table counts too.
        page = "# T\n\nOne two.\n\n| a b | c |\n|---|:--:|\n| `d e` | [f g](x.md) |\n"
        self.assertEqual(doc_measures.table_words(page), 7)
        self.assertEqual(doc_measures.reader_words(page), 9)

    def test_a_generated_blocks_words_are_read(self):
        # A generated block's table and its prose both count; code beside it does not.
        page = ("# T\n\n<!-- BEGIN generated: x docs/data/y -->\n| a | b c |\n|---|---|\n| 1 | 2 |\n\n"
                "- Three words here.\n<!-- END generated -->\n\n```\nnot read\n```\n")
        self.assertEqual(doc_measures.table_words(page), 5)
        self.assertEqual(doc_measures.prose_words(page), 3)
        self.assertEqual(doc_measures.reader_words(page), 8)

    def test_a_page_the_map_leaves_out(self):
        text = "| a | [x](guide/x.md#top), [y](notes/y/) |\n\n```\n[z](z.md)\n```\n[w](https://w.org/w.md)\n"
        self.assertEqual(map_links(text, "docs"), {"docs/guide/x.md", "docs/notes/y/README.md"})


if __name__ == "__main__":
    unittest.main()
