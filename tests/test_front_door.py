# SPDX-License-Identifier: BSD-3-Clause
"""What a newcomer meets first, held to its measures: the README's length, sentences and paragraphs, every number in
it generated, the balancer table and the counts quoted in prose against the registries, the quick study's run time
quoted in one generated place only, and the license and citation files."""
import os
import re
import subprocess
import tempfile
import unittest

import yaml

from doc_measures import (MAX_PARAGRAPH_LINES, MAX_SENTENCE_WORDS, blocks, numbered_blocks, prose_of, sentences, visible,
                          wrapped_lines)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
README = os.path.join(ROOT, "README.md")

# The README's own budget; sentences and paragraphs are held to the limits every document shares (doc_measures).
MAX_WORDS = 1200

# Digits that name a thing rather than state a quantity: the language standard, the paper's section, figures, table
# and algorithm, its venue, the distribution, the license's identifier.
NAMES = re.compile(r"C\+\+20|Sect\. 4|Fig\. [12]|Table 1|Algorithm 1|EuroMPI 2011|Debian 12|BSD-3-Clause")

NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def registry(path, macro):
    """The names a .def registry lists, in order."""
    return re.findall(rf"^{macro}\((\w+)\)", read(os.path.join(ROOT, path)), re.M)


BALANCERS = registry("balancers/src/balancers.def", "MCMCLB_BALANCER")
METHODS = registry("comm/src/methods/methods.def", "MCMCLB_METHOD")
WORKLOADS = registry("kernel/src/workloads/workloads.def", "MCMCLB_WORKLOAD")

# The terms the README defines: (the pattern of a use, the pattern of the line that defines it). A balancer's name is
# defined by its row of the balancer table.
DEFINED = {
    "rank": (r"\branks?\b", r"A \*rank\* is"),
    "chain": (r"\bchains?\b", r"\*chains\*"),
    "item": (r"\bitems?\b", r"\*item\*"),
    "group": (r"\bgroups?\b", r"\*group\*"),
    "balancer": (r"\bbalancers?\b", r"A \*balancer\*"),
    "merge": (r"\bmerges?\b", r"\*merge\*"),
    "trace": (r"\btraces?\b", r"\*trace\*"),
    "P": (r"\bP = |(?<!/)\bP\b", r"\*\*P\*\*"),  # not Blue Gene/P, a machine's name
    "regrouping": (r"\bregroupings?\b", r"\*regrouping\*"),
    "W": (r"\bW\b", r"\*\*W\*\* the chains"),
    **{name: (rf"`{name}", rf"^\| `{name}` \|") for name in BALANCERS},
    "neighbour": (r"\bneighbour", r"its \*neighbour\*, the group on its right"),
    "interval": (r"\binterval\b(?! \[)", r"\*interval\*"),
    "rule": (r"\brules?\b|`retire`|`coalesce`|`pays`", r"follows a \*rule\*"),
    "calibration": (r"\bcalibration\b", r"\*calibration\*"),
    "creation method": (r"creation method", r"a \*creation method\*"),
    "intercomm": (r"`intercomm`", r"`intercomm` and the"),
    "range": (r"`range`", r"`range` needs no message"),
    "Table 1": (r"Table 1", r"its Table 1 counts"),
    "Fig. 1": (r"Fig\. [12]", r"its Fig\. 1 times"),
    "ideal": (r"\bideal\b", r"\*ideal\* is"),
    "emulated": (r"\bemulated\b", r"\*Emulated\*"),
    "compute mode": (r"compute mode", r"\*compute mode\*"),
    "oversubscribed": (r"\boversubscribed\b", r"\*Oversubscribed\*"),
    "scenario": (r"\bscenarios?\b", r"\*\*Scenario\*\*"),
    "robust": (r"\brobust\b", r"\*robust\*"),
    "advise": (r"`advise`|mcmclb advise", r"`mcmclb advise` which balancer suits"),
    "set-up": (r"\bset-ups?\b", r"\*\*Set-up\*\*"),
    "tolerance": (r"\btolerance\b", r"The \*tolerance\* is"),
    "checkpoint": (r"\bcheckpoints?\b", r"`restore` move a chain's state"),
}
# The page the study words moved to, for those who benchmark the balancers themselves, and the terms it defines.
BENCHMARK = os.path.join(ROOT, "docs", "guide", "benchmark-the-balancers.md")
BENCHMARK_DEFINED = {
    **{term: DEFINED[term] for term in ("emulated", "compute mode", "oversubscribed", "range")},
    "Table 1": (r"Table 1", r"\*\*Table 1"),
    "Fig. 1": (r"Fig\. [12]", r"\*\*Table 1, Fig\. 1"),
    "floor": (r"`floor`", r"The `floor` row"),
    "ideal": (r"\bideal\b", r"\*\*Ideal\*\*"),
    "W": (r"\bW\b", r"W is the chains"),
    "creation method": (r"creation method", r"\*\*Creation method\*\*"),
    "intercomm": (r"`intercomm`", r"`intercomm` is"),
    "create": (r"`create`|`create_group`", r"`create_group`, `from_group`, `create`"),
    "mcmclb compare": (r"mcmclb compare", r"`mcmclb compare` forms"),
}


class Readme(unittest.TestCase):
    text = read(README)

    def test_is_read_in_five_minutes(self):
        paragraphs = prose_of(self.text)
        words = sum(len(line.split()) for p in paragraphs for line in p)
        self.assertLessEqual(words, MAX_WORDS, f"README.md: {words} words of prose")
        for p in paragraphs:
            for s in sentences(p):
                self.assertLessEqual(len(s.split()), MAX_SENTENCE_WORDS, f"README.md: a sentence of "
                                     f"{len(s.split())} words: {s.strip()[:100]}...")
            self.assertLessEqual(wrapped_lines(p), MAX_PARAGRAPH_LINES, f"README.md: a paragraph of "
                                 f"{wrapped_lines(p)} lines: {p[0][:80]}...")

    def test_every_number_is_generated(self):
        for kind, lines in blocks(self.text):
            if kind in ("code", "generated", "comment", "image"):
                continue
            for line in lines:
                # Code spans are names (files, commands, keys), not quantities.
                seen = NAMES.sub("", visible(re.sub(r"`[^`]*`", "", line)))
                self.assertIsNone(re.search(r"\d", seen), f"README.md: a number typed by hand (allowed: in a "
                                                          f"generated block): {line.strip()}")

    def test_has_its_sections(self):
        """One reader, with walkers to balance: the path, which balancer when, the class, the findings that decide
        it, in that order; benchmarking the balancers themselves is a page of its own, one link away."""
        headings = [line[3:] for line in self.text.splitlines() if line.startswith("## ")]
        order = ("Your walkers", "Which balancer when", "The class", "Key findings", "Benchmark the balancers")
        for needed in order + ("License", "Cite"):
            self.assertIn(needed, headings)
        self.assertEqual([headings.index(h) for h in order], sorted(headings.index(h) for h in order), headings)
        benchmark = section(self.text, "#benchmark-the-balancers", None)
        self.assertIn("](docs/guide/benchmark-the-balancers.md)", benchmark)
        self.assertLessEqual(len([l for l in benchmark.splitlines()[1:] if l.strip()]), 2, benchmark)
        for gone in ("<!-- demo:", "**Table 1, Fig. 1, Fig. 2**", "`intercomm` is", "The `floor` row"):
            self.assertNotIn(gone, self.text, f"README.md: the benchmarking page's {gone} is back")

    def test_your_walkers_path_and_the_decision_table_come_first(self):
        """The path a user of the library pastes and the table of which balancer when, within the README's first
        80 lines."""
        first = "\n".join(self.text.splitlines()[:80])
        for line in ("./bootstrap.sh", "cmake --install", "examples/minimal", "mpiexec -n", "mcmclb advise",
                     "--print-run-flags", "--mcmclb-checkpoint", "## Which balancer when",
                     "<!-- BEGIN generated: start-with"):
            self.assertIn(line, first, f"README.md: `{line}` not in the first 80 lines")

    def test_the_first_screen_links_no_maintainers_note(self):
        """The first screen is the user's: no link into docs/notes/, the maintainers' measurements."""
        screen = self.text[:self.text.index(FIRST_SCREEN_END)]
        self.assertNotIn("](docs/notes/", screen)

    def test_terms_come_after_their_definition(self):
        """No term is used before the line that defines it, counting prose, tables and generated blocks (code
        aside). DEFINED holds each term the README defines with the pattern of its definition; BENCHMARK_DEFINED
        those of the page on benchmarking the balancers, held to the same."""
        for path, text, terms in (("README.md", self.text, DEFINED),
                                  (os.path.relpath(BENCHMARK, ROOT), read(BENCHMARK), BENCHMARK_DEFINED)):
            with self.subTest(page=path):
                self.assertEqual(terms_before_definition(text, terms, path), [], f"{path}: terms before their "
                                 f"definition")

    def test_a_term_used_early_is_caught(self):
        text = "# T\n\nUse `mostwork` here.\n\n| name | from | idea |\n|---|---|---|\n| `mostwork` | ours | Asks. |\n"
        self.assertEqual(terms_before_definition(text, {"mostwork": DEFINED["mostwork"]}, "t.md"),
                         ["mostwork (used at line 3, defined at 7)"])

    def test_every_finding_is_marked_and_linked(self):
        findings = [b for b in blocks(self.text) if b[0] == "generated" and "findings" in b[1][0]]
        self.assertEqual(len(findings), 1, "README.md: one generated findings block")
        bullets = [lines for kind, lines in blocks("\n".join(findings[0][1][1:-1])) if kind == "prose"]
        self.assertTrue(3 <= len(bullets) <= 5, f"README.md: {len(bullets)} findings (allowed: 3-5)")
        for bullet in bullets:
            text = " ".join(bullet)
            self.assertRegex(text, r"\*(Simulated|simulated|Measured|measured)\*", text[:80])
            self.assertRegex(text, r"\]\((docs/[^)]+\.csv)\)", text[:80])
            self.assertRegex(text, r"\]\(docs/(guide|explanation)/[^)]+\.md\)", text[:80])

    def test_balancer_table_is_the_registry(self):
        rows = re.findall(r"^\| `(\w+)` \| (the paper|ours|RBC) \| [^|]+ \|$", self.text, re.M)
        self.assertEqual([name for name, _ in rows], BALANCERS, "README.md's balancer table against balancers.def")

    def test_links_resolve(self):
        self.assertEqual(broken_links(README), [])


def terms_before_definition(text, terms, path):
    """['TERM (used at line U, defined at D)'] of each term of terms (name: (use, definition) patterns) that text
    uses, outside code and comments, before the line that defines it; a term without a definition fails."""
    lines = text.splitlines()
    kinds = {}
    for kind, block_lines, first in numbered_blocks(text):
        for k in range(len(block_lines)):
            kinds[first + k] = kind
    read_lines = [(n, l) for n, l in enumerate(lines, 1) if kinds.get(n, "prose") not in ("code", "comment")]
    early = []
    for term, (use, definition) in terms.items():
        defined = next((n for n, l in enumerate(lines, 1) if re.search(definition, l)), None)
        if defined is None:
            raise AssertionError(f"{path}: no definition of {term} ({definition})")
        used = next((n for n, l in read_lines if re.search(use, visible(l))), defined)
        if used < defined:
            early.append(f"{term} (used at line {used}, defined at {defined})")
    return early


# A Markdown link outside code: its target and its anchor. Fenced code is skipped line by line, code spans before.
LINK = re.compile(r"\]\((?P<target>[^)#\s]*)(?P<anchor>#[^)\s]*)?\)")
FENCE = re.compile(r"^[ \t]*(```|~~~)")


def anchors(path):
    """The anchors GitHub gives the headings of the Markdown file at path (lower case, punctuation but - and _ left
    out, spaces as -, a repeated heading suffixed -1, -2), and any <a name|id="..."> in it."""
    found, seen, fenced = set(), {}, False
    for line in read(path).splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).replace("`", "").replace("*", "")
            slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
        found.update(re.findall(r'<a (?:name|id)="([^"]+)"', line))
    return found


def broken_links(path):
    """['FILE:LINE: why'] of each relative link of the Markdown file at path, outside code, whose target does not
    exist or, in a Markdown target, whose anchor no heading gives."""
    found, fenced = [], False
    for n, line in enumerate(read(path).splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target, anchor = m["target"], m["anchor"]
            if re.match(r"[a-z]+:", target):
                continue
            full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
            where = f"{os.path.relpath(path, ROOT)}:{n}"
            if not os.path.exists(full):
                found.append(f"{where}: {target} does not exist")
            elif anchor and full.endswith(".md") and anchor[1:] not in anchors(full):
                found.append(f"{where}: {target}{anchor}: no such heading")
    return found


def documents():
    """The README and every Markdown page under docs/."""
    pages = [os.path.join(d, f) for d, _, names in os.walk(os.path.join(ROOT, "docs")) for f in names
             if f.endswith(".md")]
    return [README, os.path.join(ROOT, "CHANGELOG.md")] + sorted(pages)


# A pointer to a section by name, as comments in configs and scripts write them: a path to a Markdown page, then the
# heading's words quoted in parentheses.
NAMED_SECTION = re.compile(r'(?P<page>[\w./-]+\.md) \("(?P<heading>[^"]+)"\)')


def named_section_sources():
    """The files a reader follows a named section from: every text file in the tree but results (docs/data, whose
    READMEs are records of their time), the archive and build folders."""
    skip = {".git", "docs/data", "docs/notes/archive"}
    for folder, dirs, names in os.walk(ROOT):
        rel = os.path.relpath(folder, ROOT)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in skip and not d.startswith("build")]
        for name in names:
            if os.path.join(folder, name) == os.path.abspath(__file__):
                continue  # its own examples of a missing section
            if name.endswith((".md", ".xml", ".yaml", ".cfg", ".py", ".sh", ".cpp", ".hpp", ".cmake", ".txt")):
                yield os.path.join(folder, name)


def missing_sections(path):
    """['FILE:LINE: PAGE ("Heading"): why'] of each named section in the file at path whose page (from the tree's
    root or from the file's folder) does not exist or has no heading starting with the quoted words."""
    found = []
    for n, line in enumerate(read(path).splitlines(), 1):
        for m in NAMED_SECTION.finditer(line):
            page = next((p for p in (os.path.join(ROOT, m["page"]), os.path.join(os.path.dirname(path), m["page"]))
                         if os.path.isfile(p)), None)
            where = f"{os.path.relpath(path, ROOT)}:{n}"
            if page is None:
                found.append(f"{where}: {m[0]}: no such file")
                continue
            headings = [h.lower() for h in re.findall(r"^#{1,6}\s+(.*?)\s*$", read(page), re.M)]
            if not any(h.replace("`", "").startswith(m["heading"].lower()) for h in headings):
                found.append(f"{where}: {m[0]}: no such heading")
    return found


class Links(unittest.TestCase):
    def test_every_link_of_every_page_resolves(self):
        """Each relative link of the README, the changelog and every page under docs/ names a file that exists and,
        into a Markdown page, a heading it has: a page moved or a heading renamed breaks no link silently."""
        found = [problem for path in documents() for problem in broken_links(path)]
        self.assertEqual(found, [])

    def test_every_section_named_in_a_file_exists(self):
        """A comment or page that sends a reader to a section by name (docs/x.md ("Heading")) names a heading the page
        has (the heading may go on after the quoted words): a renamed section strands no pointer in a platform file,
        a study or a script, which no link check reads."""
        found = [problem for path in named_section_sources() for problem in missing_sections(path)]
        self.assertEqual(found, [])

    def test_a_missing_section_is_caught(self):
        # Outside the tree: a test that reads configs/ beside this one must not meet the example.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write('# docs/guide/simulation.md ("Flags, and why"), docs/guide/simulation.md ("No such part")\n'
                        '# docs/no-such.md ("Anything")\n')
            self.assertEqual([p.split(": ", 1)[1] for p in missing_sections(path)],
                             ['docs/guide/simulation.md ("No such part"): no such heading',
                              'docs/no-such.md ("Anything"): no such file'])

    def test_a_broken_link_is_caught(self):
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "docs")) as d:
            page = os.path.join(d, "page.md")
            with open(page, "w", encoding="utf-8") as f:
                f.write("# Title here\n\n[ok](#title-here), [map](../README.md#tutorial), `[code](x.md)`\n\n"
                        "[gone](no-such.md), [anchor](../README.md#no-such-heading)\n\n```\n[fenced](y.md)\n```\n")
            self.assertEqual([p.split(": ", 1)[1] for p in broken_links(page)],
                             ["no-such.md does not exist", "../README.md#no-such-heading: no such heading"])


# A newcomer's path from the README's top to a first advised run of their own walkers: the README up to its second
# door, then, for each step the README leaves out, the section of a guide that gives it. A step is (what, the pattern
# that gives it in the README's part, the section followed where it does not: page, from, to). A bound is a heading's
# anchor (#...) or the start of a line; from None is the page's top, to None the next heading.
PATH_END = "## Which balancer when"
CHAINS, WORKLOAD = "docs/guide/your-chains.md", "docs/guide/your-workload.md"
PATH_STEPS = [
    ("requirements: C++20, and one MPI for mcmclb and the program", r"C\+\+20[\s\S]*MPI library, the same for mcmclb and your program",
     (CHAINS, "#building-against-the-installed-library", None)),
    ("install", r"cmake --install", (CHAINS, "#building-against-the-installed-library", None)),
    ("record a trace", r"MCMCLB_RECORD|options\.record", (CHAINS, "#recording-a-trace", None)),
    ("ask advise", r"mcmclb advise", (WORKLOAD, None, "**The shipped trace's answer.**")),
    ("read its set-up", r"\*\*Set-up\*\*: such as `\w+\(\d+\) \w+ \w+`", (WORKLOAD, None, "**The shipped trace's answer.**")),
    ("read its tolerance", r"The \*tolerance\* is", (WORKLOAD, None, "**The shipped trace's answer.**")),
    ("run with the advised flags", r"--print-run-flags|--mcmclb-balancer \w+ --mcmclb-interval",
     (CHAINS, "#options-the-keys-of-a-study-file", None)),
    ("resume after a kill", r"--mcmclb-checkpoint", (CHAINS, "#checkpoints-and-jobs-that-end-on-time", None)),
]
MAX_PATH_WORDS = 1000
# The README's first screen, up to its first heading under "Your walkers": requirements to a resumed run.
FIRST_SCREEN_END = "### "
MAX_FIRST_SCREEN_WORDS = 150


def heading_slug(line):
    """The anchor GitHub gives a heading line, or None for a line that is no heading (as anchors() makes them)."""
    heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
    if not heading:
        return None
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def section(text, start, end):
    """The lines of text from start (a heading's #anchor, a line's start, or None: the top) up to end (the same, or
    None: the next heading after start's line), end's line left out."""
    lines = text.splitlines()

    def at(bound, after):
        for n in range(after, len(lines)):
            if bound is None and n > after and heading_slug(lines[n]) is not None:
                return n
            if bound is not None and (heading_slug(lines[n]) == bound[1:] if bound.startswith("#") else
                                      lines[n].startswith(bound)):
                return n
        return None if bound is not None else len(lines)
    first = 0 if start is None else at(start, 0)
    if first is None:
        raise ValueError(f"no {start}")
    last = at(end, first)
    if last is None:
        raise ValueError(f"no {end} after {start}")
    return "\n".join(lines[first:last])


def path_words(readme_text):
    """(words read, [(page, from, to, words) of each section followed]) on the path from the README's top to a first
    advised run: the README up to PATH_END, and each distinct section a missing step sends the reader to. Words as
    a reader reads them (doc_measures.reader_words: prose and tables, code aside). Raises ValueError where a step is
    missing from the README's part and its page is not linked from it."""
    from doc_measures import reader_words
    part = readme_text[:readme_text.index(PATH_END)]
    followed = []
    for what, pattern, target in PATH_STEPS:
        if re.search(pattern, part):
            continue
        if f"]({target[0]}" not in part:
            raise ValueError(f"README.md: '{what}' is neither on the path nor linked from it ({target[0]})")
        if target not in followed:
            followed.append(target)
    counted = [(page, start, end, reader_words(section(read(os.path.join(ROOT, page)), start, end)))
               for page, start, end in followed]
    return reader_words(part) + sum(c[-1] for c in counted), counted


class Path(unittest.TestCase):
    def test_the_first_screen_is_the_path(self):
        """The README's opening, up to the first heading under its first section, holds what a first advised run
        needs, from the requirements to a run resumed after a kill, in at most 150 words of prose."""
        text = Readme.text
        self.assertIn(FIRST_SCREEN_END, text, "README.md: no heading under its first section ends the first screen")
        screen = text[:text.index(FIRST_SCREEN_END)]
        from doc_measures import prose_words
        self.assertLessEqual(prose_words(screen), MAX_FIRST_SCREEN_WORDS, "README.md's first screen")
        for what, pattern, _ in PATH_STEPS:
            if not what.startswith("read"):
                self.assertRegex(screen, pattern, f"README.md's first screen lacks '{what}'")

    def test_a_first_advised_run_in_a_thousand_words(self):
        words, counted = path_words(Readme.text)
        print(f"path to a first advised run: {words} words read; sections followed: {counted}")
        self.assertLessEqual(words, MAX_PATH_WORDS, f"README.md: the path to a first advised run is {words} words "
                             f"read, through {counted}")

    def test_a_step_left_to_a_guide_counts_its_section(self):
        # Without its run flags and tolerance, the path follows the guides' sections and counts their words.
        text = Readme.text.replace("--mcmclb-balancer mostwork --mcmclb-interval", "--mcmclb-xx").replace(
            "--print-run-flags", "--xx").replace("The *tolerance* is", "The tolerance is")
        text = text.replace(PATH_END, f"[g]({CHAINS}), [w]({WORKLOAD})\n\n" + PATH_END, 1)
        words, counted = path_words(text)
        self.assertEqual([c[:3] for c in counted], [(WORKLOAD, None, "**The shipped trace's answer.**"),
                                                    (CHAINS, "#options-the-keys-of-a-study-file", None)])
        self.assertGreater(words, path_words(Readme.text)[0] + counted[0][-1])
        # A step missing and its page not linked is an error, not a shorter path.
        with self.assertRaises(ValueError):
            path_words(Readme.text.replace("The *tolerance* is", "The tolerance is").replace(
                f"]({WORKLOAD})", "](docs/README.md)"))


class Guides(unittest.TestCase):
    def test_each_guide_opens_with_what_it_answers(self):
        """Each guide's and each explanation page's first paragraph, right under its title, is prose a newcomer
        reads in one go: at most six lines; measurement reports belong to the dated notes."""
        pages = [os.path.join(ROOT, "docs", folder, f) for folder in ("guide", "explanation")
                 for f in sorted(os.listdir(os.path.join(ROOT, "docs", folder))) if f.endswith(".md")]
        for path in pages:
            name = os.path.relpath(path, os.path.join(ROOT, "docs"))
            with self.subTest(guide=name):
                found = blocks(read(path))
                self.assertEqual(found[0][0], "heading", f"{name}: starts with its title")
                kind, lines = found[1]
                self.assertEqual(kind, "prose", f"{name}: the title is followed by a paragraph, not a {kind}")
                self.assertLessEqual(wrapped_lines([visible(line) for line in lines]), MAX_PARAGRAPH_LINES,
                                     f"{name}: an opening paragraph of more than {MAX_PARAGRAPH_LINES} lines")


class Drift(unittest.TestCase):
    def documents(self):
        paths = [README] + [os.path.join(d, f) for d in (os.path.join(ROOT, "docs"), os.path.join(ROOT, "docs", "guide"),
                                                        os.path.join(ROOT, "docs", "explanation"),
                                                        os.path.join(ROOT, "docs", "reference"))
                            for f in sorted(os.listdir(d)) if f.endswith(".md")]
        configs = os.path.join(ROOT, "configs")
        paths += [os.path.join(configs, f) for f in sorted(os.listdir(configs)) if f.endswith(".yaml")]
        return paths

    def test_counts_in_prose_are_the_registries(self):
        """'Seven balancers are registered' where there are eight: a count of balancers, creation methods or workload
        models stated as the whole must be the registry's; a count qualified as part of them ('the four balancers
        under pays', 'the other five methods') is left alone."""
        counts = {"balancers": len(BALANCERS), "methods": len(METHODS), "creation methods": len(METHODS),
                  "workload models": len(WORKLOADS)}
        number = "|".join(list(NUMBER_WORDS) + [r"\d+"])
        phrase = re.compile(rf"(?<![\w-])(?P<before>\w+ )?(?P<n>{number}) (?P<what>creation methods|balancers|methods|"
                            rf"workload models)(?P<after> \w+)?", re.I)
        part_before = {"other", "these", "those", "its", "paper's", "first", "last", "all", "under", "between", "for",
                       "from", "to", "by", "and", "or", "compares", "compare"}
        part_after = {"under", "that", "which", "of", "at", "in", "with", "it", "than", "on", "each"}
        for path in self.documents():
            for n, line in enumerate(read(path).splitlines(), 1):
                for m in phrase.finditer(line):
                    value = m["n"].lower()
                    value = NUMBER_WORDS[value] if value in NUMBER_WORDS else int(value)
                    before = (m["before"] or "").strip().lower()
                    after = (m["after"] or "").strip().lower()
                    if value == counts[m["what"].lower()] or before in part_before or after in part_after:
                        continue
                    self.fail(f"{os.path.relpath(path, ROOT)}:{n}: '{m[0].strip()}', where the registry has "
                              f"{counts[m['what'].lower()]} {m['what'].lower()}")

    def test_the_demo_time_is_quoted_in_one_generated_place(self):
        """The quick study's run time comes from its committed timing (docs/data/quick-demo/demo-timing.csv) through the
        generated quick start of docs/guide/benchmark-the-balancers.md; a duration typed beside the study's name
        elsewhere drifts."""
        duration = re.compile(r"\b(about|within|takes|took|in)\s+(a|an|half a|\d[\d.,]*)\s*(s|sec|seconds?|min|"
                              r"minutes?|h|hours?)\b", re.I)
        for path in self.documents():
            text = read(path)
            for kind, lines in blocks(text) if path.endswith(".md") else [("prose", text.splitlines())]:
                if kind == "generated":
                    continue
                for line in lines:
                    near = path.endswith("quick.yaml") and line.startswith("#") or "quick.yaml" in line or \
                        "the demo" in line.lower()
                    self.assertFalse(near and duration.search(line), f"{os.path.relpath(path, ROOT)}: the quick "
                                     f"study's run time typed by hand (allowed: the generated quick start): "
                                     f"{line.strip()}")


class LicenseAndCitation(unittest.TestCase):
    def test_license_and_citation(self):
        license_text = read(os.path.join(ROOT, "LICENSE"))
        self.assertIn("BSD 3-Clause License", license_text)
        citation = yaml.safe_load(read(os.path.join(ROOT, "CITATION.cff")))
        self.assertEqual(citation["cff-version"], "1.2.0")
        self.assertEqual(citation["license"], "BSD-3-Clause")
        self.assertEqual(citation["references"][0]["title"], "Noncollective Communicator Creation in MPI")
        self.assertIn("(CITATION.cff)", read(README))

    def test_readme_cites_this_version(self):
        """The README's BibTeX entry for mcmclb itself names the release CMake's project() and CITATION.cff give,
        and CITATION.cff's authors."""
        version = re.search(r"^project\(mcmclb VERSION ([0-9.]+)", read(os.path.join(ROOT, "CMakeLists.txt")),
                            re.M).group(1)
        entry = re.search(r"@software\{mcmclb,.*?\n\}", read(README), re.S)
        self.assertIsNotNone(entry, "README.md: no BibTeX @software entry for mcmclb in its Cite section")
        self.assertIn(f"version = {{{version}}}", entry.group(0))
        citation = yaml.safe_load(read(os.path.join(ROOT, "CITATION.cff")))
        self.assertEqual(str(citation["version"]), version)
        # The authors as CITATION.cff names them: an entity (name:) is one brace-protected BibTeX name.
        names = [f"{{{a['name']}}}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
                 for a in citation["authors"]]
        self.assertRegex(entry.group(0), r"author\s*=\s*\{" + re.escape(" and ".join(names)) + r"\},")

    def test_every_source_says_its_license(self):
        """Each tracked source file carries the SPDX identifier of LICENSE, so a file copied alone keeps it."""
        files = subprocess.run(["git", "ls-files", "--", "*.cpp", "*.hpp", "*.h", "*.c", "*.py", "*.sh",
                                "CMakeLists.txt", "*.cmake", "*.def"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.split()
        self.assertTrue(files)
        missing = [f for f in files if "SPDX-License-Identifier: BSD-3-Clause" not in
                   "\n".join(read(os.path.join(ROOT, f)).splitlines()[:3])]
        self.assertEqual(missing, [], "files without SPDX-License-Identifier: BSD-3-Clause in their first lines")


if __name__ == "__main__":
    unittest.main()
