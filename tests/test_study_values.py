# SPDX-License-Identifier: BSD-3-Clause
"""A study a program builds is a value (study/include/mcmclb/study_value.hpp), checked by the study's checks as it
stands, never text written to be parsed again. A command that builds YAML text and hands it to the parser is two
programs talking through a file: the value's types are lost on the way, a name holding a comma or a bracket can turn
into a list, and every key's error comes back as the parser's reading of text the program wrote itself. mcmclb advise
did so with its studies (study_text, with_keys) and mcmclb::walkers with its options ("key=value" strings parsed as
YAML). This test reads the C++ sources, running nothing, and fails on any code path that does it again:
  - the old helpers by name (with_keys, study_text);
  - a parse entry point called on a string literal or on text built with + in the call;
  - a parse entry point called on a variable that the same file builds from a literal holding a YAML key ("key: ")
    or from study_file_text(), the writer of a study file.
The parser's own file (study/src/config.cpp: its key table's defaults and --set's values are YAML by definition) and
the tests (which feed the parser text on purpose) are left out. A study file is still written, from the value, where
a user is to see or rerun it; only reading it back in the same program is refused."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = (".cpp", ".hpp", ".h")
SKIP_DIRS = {"tests", "build", ".git", "docs", "plots", "configs", "jobs", "examples"}
PARSER = os.path.join("study", "src", "config.cpp")
# The entry points that parse a study's text, and which argument holds the text (0-based).
ENTRY = {"parse_experiment": 0, "expand_study": 0, "build_study": 0, "study_value": 0, "YAML::Load": 0,
         "YAML::LoadAll": 0, "launch::load": 1, "load_keeping_seed": 1}
OLD_HELPERS = re.compile(r"\b(with_keys|study_text)\s*\(")
YAML_KEY_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*\b[A-Za-z_][A-Za-z0-9_.]*: (?:[^"\\]|\\.)*"')


def sources():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        dirnames[:] = [d for d in dirnames if not (rel == "." and (d in SKIP_DIRS or d.startswith("build")))]
        for name in filenames:
            if name.endswith(SOURCE):
                path = os.path.normpath(os.path.join(rel, name))
                if path != PARSER:
                    yield path


def strip_comments(text):
    """The code without // and /* */ comments (string literals kept, so that a literal's // stays)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def arguments(code, open_at):
    """The top-level arguments of the call whose '(' is at open_at."""
    depth, args, start, i = 0, [], open_at + 1, open_at
    while i < len(code):
        c = code[i]
        if c == '"':
            i += 1
            while i < len(code) and code[i] != '"':
                i += 2 if code[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(code[start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(code[start:i].strip())
            start = i + 1
        i += 1
    return args


def round_trips(code):
    """Each parse call on text the same code builds: (entry point, its text argument, why)."""
    found = []
    for entry, which in ENTRY.items():
        for m in re.finditer(r"(?<![\w:])" + re.escape(entry) + r"\s*\(", code):
            args = arguments(code, m.end() - 1)
            if len(args) <= which:
                continue
            text = args[which]
            if text.startswith('"') or ('"' in text and "+" in text):
                found.append((entry, text, "a literal or text built in the call"))
                continue
            name = re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", text)
            if not name:
                continue
            built = re.compile(r"(?<![\w.])" + re.escape(text) + r"\s*(?:\+?=)\s*([^;]*);")
            for b in built.finditer(code):
                if YAML_KEY_LITERAL.search(b.group(1)) or "study_file_text(" in b.group(1):
                    found.append((entry, text, "built from YAML text in the same file: " + b.group(1)[:80]))
                    break
    return found


class StudyValues(unittest.TestCase):
    def test_no_code_path_builds_yaml_text_to_parse_it_again(self):
        wrong = []
        for path in sources():
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                code = strip_comments(f.read())
            for m in OLD_HELPERS.finditer(code):
                wrong.append(f"{path}: {m.group(1)}(): study text built to be parsed again (build a StudyValue)")
            for entry, text, why in round_trips(code):
                wrong.append(f"{path}: {entry}({text[:60]}): {why}")
        self.assertEqual(wrong, [])

    def test_the_grep_finds_what_it_forbids(self):
        # The patterns as the old advise and walkers code wrote them, each found; a file's own text read is not.
        bad = [
            'Experiment e = parse_experiment("experiment: walkers\\n", keys, "x");',
            'std::string text = "experiment: " + name + "\\nnprocs: 4\\n";\nconst Study s = launch::load(real, text);',
            'const std::string text = study_file_text(value);\nStudy s = build_study(text, {}, "x", 4, c);',
            'StudyAxes a = expand_study("zip: {" + keys + "}", {}, "x");',
        ]
        for code in bad:
            self.assertTrue(round_trips(strip_comments(code)), code)
        good = ['const std::string text = launch::read_file(o.study, "study file");\nStudy s = launch::load(o, text);',
                'Study s = launch::load(sweep, study_of(plan, o, false, {}));']
        for code in good:
            self.assertEqual(round_trips(strip_comments(code)), [], code)
        self.assertTrue(OLD_HELPERS.search("with_keys(p.base, keys, o.input)"))


if __name__ == "__main__":
    unittest.main()
