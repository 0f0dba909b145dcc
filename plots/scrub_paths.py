#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Makes a results folder fit to commit under docs/: every path of the machine that made it is rewritten in its CSV
files, so that provenance.csv can be kept beside runs.csv (the evidence rule: no absolute path in a committed CSV).

Per row, a path under the row's working_dir (provenance.csv) becomes relative to it (`/home/u/mcmclb/build/mcmclb`
-> `build/mcmclb`), working_dir itself becomes `.`, and any other absolute path keeps only its last part
(`/usr/bin/mpiexec.mpich` -> `mpiexec.mpich`, `/tmp/x/study.yaml` -> `study.yaml`). Nothing else changes: the values
that are not paths, the columns and the row order. Each file is replaced whole (written beside and renamed), and a
file or folder that cannot be read is one line and exit 2 before anything is written.

  plots/scrub_paths.py FOLDER [FOLDER...]"""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, MACHINE_PATH, fail, write_text_atomically  # noqa: E402

ABSOLUTE_WORD = MACHINE_PATH


def scrub_value(value, working_dir):
    """value with each absolute path in it rewritten (see the module's text)."""
    def rewrite(match):
        lead, path = match.group(1), match.group(2)
        if working_dir and (path == working_dir or path.startswith(working_dir.rstrip("/") + "/")):
            rest = os.path.relpath(path, working_dir)
            return lead + rest
        return lead + os.path.basename(path.rstrip("/"))
    return ABSOLUTE_WORD.sub(rewrite, value)


def scrub_row(header, row, working_dir, provenance):
    """A row of a CSV with header, each absolute path in it rewritten against working_dir; in provenance.csv the
    working_dir column itself becomes '.'."""
    new = [scrub_value(v, working_dir) for v in row]
    if provenance and "working_dir" in header:
        i = header.index("working_dir")
        if i < len(new) and row[i]:
            new[i] = "."
    return new


def scrub_folder(folder):
    """{file name: new text} for the CSV files of folder whose text changes; reads everything first."""
    prov_path = os.path.join(folder, "provenance.csv")
    dirs = {}
    if os.path.exists(prov_path):
        with open(prov_path, newline="") as f:
            for row in csv.DictReader(f):
                dirs[row.get("run_id", "")] = row.get("working_dir", "")
    changed = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv"):
            continue
        with open(os.path.join(folder, name), newline="") as f:
            rows = list(csv.reader(f))
        if not rows:
            continue
        header, body = rows[0], rows[1:]
        at = header.index("run_id") if "run_id" in header else None
        out = [header]
        for row in body:
            working_dir = dirs.get(row[at], "") if at is not None and at < len(row) else ""
            out.append(scrub_row(header, row, working_dir, name == "provenance.csv"))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(out)
        with open(os.path.join(folder, name), newline="") as f:
            if f.read() != text.getvalue():
                changed[name] = text.getvalue()
    return changed


def main(argv=None):
    parser = ArgumentParser(prog="scrub_paths.py", description=__doc__)
    parser.add_argument("folders", nargs="+", metavar="FOLDER", help="results folder")
    args = parser.parse_args(argv)
    plans = []
    try:
        for folder in args.folders:
            if not os.path.isdir(folder):
                raise InputError(f"{folder}: " + ("is not a folder" if os.path.exists(folder) else "no such folder") +
                                 " (allowed: a results folder)")
            try:
                plans.append((folder, scrub_folder(folder)))
            except (OSError, csv.Error, UnicodeDecodeError) as e:
                raise InputError(f"{folder}: cannot read its CSV files ({e})") from None
    except InputError as e:
        fail(__file__, str(e))
    for folder, changed in plans:
        for name, text in changed.items():
            write_text_atomically(os.path.join(folder, name), text)
        print(f"{folder}: " + (", ".join(sorted(changed)) + " rewritten" if changed else "no machine path found"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
