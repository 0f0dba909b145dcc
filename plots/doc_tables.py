#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables that cannot drift: fills the generated blocks of README.md and docs/**/*.md from committed CSVs.

    plots/doc_tables.py [--check] [FILE.md ...]

The command lives in the package beside this file (plots/doc_tables/: documents.py, the registry of tables and one
module per family of documents); `plots/doc_tables.py --help` says the rest."""
import os
import sys

# A package and a module of one name in one folder: Python imports the package, so this file is only ever run.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_tables import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
