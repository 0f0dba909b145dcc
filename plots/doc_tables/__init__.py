# SPDX-License-Identifier: BSD-3-Clause
"""The generators of the documents' tables, one module per family of documents, and the command that fills the
`<!-- BEGIN generated: NAME ARG... -->` blocks (plots/doc_tables.py runs documents.main).

    common.py         what every table shares: Inputs (a block's folders and options, each CSV read once) and cells
    registry.py       TABLES, the one list of the tables a block may name, and generate()
    pages.py          the pages holding blocks, the blocks of a Markdown file and its links (imports no other
                      module of the package but common.py)
    documents.py      the blocks' rewriting and the command line
    readme.py         README: quick-start, findings
    paper.py          docs/explanation/paper-reproduction.md: the page's answer (paper-answer), Fig. 1's
                      finding on the platform's variants (fig1-sensitivity) and each method's time on them
                      (fig1-links)
    steal_regroup.py  docs/explanation/steal-vs-regroup.md
    steal_regroup_findings.py  the same page's sentences that state figures
    merge_pays.py     docs/explanation/merge-pays.md
    merge_pays_findings.py  the same page's sentences that state figures
    simulation.py     docs/guide/simulation.md, Table 1 and the simulated studies of paper-reproduction.md
    commbench.py      docs/guide/commbench.md and the real-MPI measurements
    reproductions.py  docs/reference/reproductions.md, and what is not yet reproduced (also paper-reproduction.md)
    your_workload.py  docs/guide/your-workload.md: trace replays
    host_time.py      a data folder's host cost from its time records and provenance, and what moved a simulated
                      time (placement, a reproduction), as sentences: no such figure is typed by hand
    bounds.py         the reproductions' bounds, stated before a rerun from the precision the pages print
                      (plots/doc_tables.py --bounds), and a rerun held to them

A new table is a function in its family's module, taking Inputs and returning Markdown, and one line in TABLES.
The package is imported with plots/ on the path (as plots/doc_tables.py and the tests put it there), beside the
plot scripts' modules whose code the tables build on."""
from mcmclb_csv import InputError, run_label

from .common import ROOT, Inputs
from .documents import main, regenerate
from .pages import FENCE, blocks
from .registry import TABLES, generate
from .reproductions import (NOT_YET_REPRODUCED, compare_runs, coverage, nodes_spanned, regroups,
                             reproduction_problems, reproductions_of, switches_spanned)

# What the command and the tests use: the error callers catch, the blocks of a document, the registry, and the
# reproductions' comparison, the nodes and switches a run spans, what a reproduction must cover and the folders not
# yet reproduced (tests/test_evidence.py). ROOT is a copy: a test points the tables elsewhere through common.ROOT.
__all__ = ["FENCE", "NOT_YET_REPRODUCED", "ROOT", "TABLES", "InputError", "Inputs", "blocks", "compare_runs",
           "coverage", "generate", "main", "nodes_spanned", "regenerate", "regroups", "reproduction_problems",
           "reproductions_of", "run_label", "switches_spanned"]
