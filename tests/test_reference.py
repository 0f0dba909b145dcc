# SPDX-License-Identifier: BSD-3-Clause
"""The reference pages and the Python CSV schemas against what the C++ writes.

docs/reference/keys.md must hold the key table exactly as `mcmclb keys` prints it (the table in
study/src/config.cpp that also parses and defaults every key), docs/reference/columns.md must list exactly the
columns each CSV file has (`mcmclb columns`; commbench.csv and live-communicators.csv from the headers
mcmclb-commbench writes), in order, and plots/mcmclb_csv.py must read the same columns, so that neither the pages
nor the plots drift when one side changes alone. Needs MCMCLB_BIN and MCMCLB_COMMBENCH (ctest sets them)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "plots"))
import mcmclb_csv  # noqa: E402

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
COMMBENCH = os.path.realpath(os.environ["MCMCLB_COMMBENCH"])
KEYS_MD = os.path.join(ROOT, "docs", "reference", "keys.md")
COLUMNS_MD = os.path.join(ROOT, "docs", "reference", "columns.md")
BEGIN, END = "<!-- BEGIN mcmclb keys -->\n", "<!-- END mcmclb keys -->\n"

# Python schemas of files mcmclb does not write (the paper's reference values under plots/reference/, and the
# records of measurements other programs make: GNU time, bench_lj, the README demo's timing, the walkers note's runs,
# bench_exact_sum's and bench_chain_order's rows, advise's estimates against its wall time, with --check, racing,
# whole and repeated).
PYTHON_ONLY = {"dinan2011.csv", "host-time.csv", "bench_lj.csv", "demo-timing.csv", "walkers-overhead.csv",
               "exact-sum-cost.csv", "checkpoint-cost.csv", "chain-order-p2.csv", "estimates.csv",
               "estimates-check.csv", "estimates-race.csv", "estimates-whole.csv",
               "estimates-repeated.csv", "calibrate-provenance.csv", "pingpong.csv", "allreduce.csv", "errors.csv",
               "calibration-check-provenance.csv", "checkpoint-forms.csv"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def cxx_headers():
    """{file: [columns]} as the C++ writes them: every results-folder file, commbench.csv and
    live-communicators.csv."""
    out = subprocess.run([MCMCLB, "columns"], capture_output=True, text=True, timeout=60, check=True).stdout
    headers = {}
    for line in out.splitlines():
        name, columns = line.split(": ", 1)
        headers[name] = columns.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "commbench.csv")
        subprocess.run(["mpiexec", "-n", "1", COMMBENCH, "--methods", "split", "--sizes", "1", "--reps", "1",
                        "--warmup", "0", "--rep-time", "0.001", "--out", csv_path],
                       capture_output=True, text=True, timeout=120, check=True)
        with open(csv_path, encoding="utf-8") as f:
            headers["commbench.csv"] = f.readline().rstrip("\n").split(",")
        live_path = os.path.join(tmp, "live.csv")
        subprocess.run(["mpiexec", "-n", "1", COMMBENCH, "--live-communicators", "2", "--methods", "range", "--out",
                        live_path], capture_output=True, text=True, timeout=120, check=True)
        with open(live_path, encoding="utf-8") as f:
            headers["live-communicators.csv"] = f.readline().rstrip("\n").split(",")
    return headers


def documented_columns(text):
    """{file: [columns]} from columns.md: each '## FILE' section's table, its first cells in order."""
    sections = {}
    current = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## (\S+\.csv)", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
            continue
        if line.startswith("## "):
            current = None
        cell = re.match(r"\| `([^`]+)` \|", line)
        if current is not None and cell:
            current.append(cell.group(1))
    return sections


class Reference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.headers = cxx_headers()

    def test_keys_md_holds_the_key_table(self):
        table = subprocess.run([MCMCLB, "keys"], capture_output=True, text=True, timeout=60, check=True).stdout
        text = read(KEYS_MD)
        self.assertIn(BEGIN, text)
        self.assertIn(END, text)
        block = text.split(BEGIN, 1)[1].split(END, 1)[0]
        self.assertEqual(block, table, "docs/reference/keys.md: the block between the markers differs from "
                         "`build/mcmclb keys`; paste its output there")
        # No other table of keys on the page (one naming a key the table does not have, or an older copy).
        outside = text.replace(block, "")
        self.assertNotIn("| key |", outside, "docs/reference/keys.md: a table of keys outside the markers")

    def test_columns_md_lists_every_column(self):
        documented = documented_columns(read(COLUMNS_MD))
        self.assertEqual(sorted(documented), sorted(self.headers), "files documented vs. files written")
        for name, header in self.headers.items():
            self.assertEqual(documented[name], header, f"docs/reference/columns.md, {name}")

    def test_python_choices_match_the_keys(self):
        # A runs.csv column that records a study key of named values (workload_extrapolate: workload.extrapolate)
        # allows in plots/mcmclb_csv.py exactly the names the key allows (`mcmclb keys`): a value the driver
        # writes must never be refused by a plot script, nor a name it cannot write accepted.
        table = subprocess.run([MCMCLB, "keys"], capture_output=True, text=True, timeout=60, check=True).stdout
        allowed = {}
        for line in table.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 4 and cells[0].startswith("`") and cells[1].startswith("name"):
                # The names listed first; words after them (finished: which balancer offers which) are not more.
                listed = re.match(r"(`[^`]+`(, `[^`]+`)*)( \(|$)", cells[3])
                if listed:
                    allowed[cells[0].strip("`")] = re.findall(r"`([^`]+)`", listed.group(1))
        checked = []
        for column, spec in mcmclb_csv.SCHEMAS["runs.csv"].items():
            key = next((k for k in (column, column.replace("_", ".", 1), "work." + column) if k in allowed), None)
            if spec.choices and key:
                checked.append(column)
                # A run records what it resolved: `auto` (wait) is never written.
                written = sorted(set(allowed[key]) - {"auto"})
                self.assertEqual(sorted(spec.choices), written, f"plots/mcmclb_csv.py, runs.csv {column}")
        self.assertIn("workload_extrapolate", checked)
        self.assertIn("finished", checked)

    def test_python_choices_match_the_tolerance_kinds(self):
        # advice.csv's tolerance_source: plots/mcmclb_csv.py allows exactly the kinds advise writes
        # (advice::kToleranceKinds), so a new source of the tolerance never makes advise's own plot refuse its file.
        found = re.search(r"kToleranceKinds = \{([^}]*)\}", read(os.path.join(ROOT, "advice", "include", "mcmclb",
                                                                            "advice.hpp")))
        self.assertIsNotNone(found)
        kinds = re.findall(r'"([^"]+)"', found.group(1))
        self.assertIn("prediction", kinds)
        self.assertEqual(sorted(mcmclb_csv.SCHEMAS["advice.csv"]["tolerance_source"].choices), sorted(kinds))

    def test_python_schemas_match_the_cxx(self):
        shared = set(mcmclb_csv.SCHEMAS) - PYTHON_ONLY
        self.assertLessEqual(shared, set(self.headers), "plots/mcmclb_csv.py reads a file mcmclb does not write")
        for name in sorted(shared):
            self.assertEqual(list(mcmclb_csv.SCHEMAS[name]), self.headers[name], f"plots/mcmclb_csv.py, {name}")


if __name__ == "__main__":
    unittest.main()
