# SPDX-License-Identifier: BSD-3-Clause
"""The pieces of report.py's one-page HTML report: tables, embedded figures, the study and its provenance, and the
page around them. The page is self-contained (figures are base64 PNG data URIs, the style is inline; no script,
no link, nothing fetched), so it can be mailed or attached as one file. Every text that comes from the data (names,
values, command lines, a compare CSV) goes through esc(): an experiment named `<script>` is shown, never run."""
import base64
import csv
import html
from collections import Counter

from mcmclb_csv import SCHEMAS, InputError, open_regular

STYLE = """
body { font-family: sans-serif; max-width: 1250px; margin: 1em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.verdict, td.verdict { background: #fff3c4; font-weight: bold; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
figure { margin: 0.8em 0; } figcaption, p.note { font-size: 0.85em; color: #555; }
code, .mono { font-family: monospace; font-size: 0.9em; word-break: break-all; }
p.warning { background: #fff3c4; border-left: 4px solid #d9a300; padding: 0.4em 0.6em; }
"""

# The runs.csv columns that describe what was run (the parameters and where it ran), in the file's order.
_RUN_SCHEMA = list(SCHEMAS["runs.csv"])
STUDY_COLUMNS = (_RUN_SCHEMA[_RUN_SCHEMA.index("experiment"):_RUN_SCHEMA.index("method") + 1] +
                 ["backend", "platform", "finished"])
RUN_PROVENANCE = ["mpi_library", "git_commit", "host"]


def esc(value):
    """value as HTML text, every markup character escaped (quotes too, so it is safe in an attribute)."""
    return html.escape("" if value is None else str(value), quote=True)


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def table(header, rows, highlight=None):
    """An HTML table of header and rows (lists of cells, any values); the column named highlight, if any, is
    marked (class verdict). Numbers are right-aligned."""
    marked = {i for i, name in enumerate(header) if highlight is not None and name == highlight}

    def cell(tag, i, value):
        classes = (["verdict"] if i in marked else []) + (["num"] if tag == "td" and _is_number(str(value)) else [])
        attr = f' class="{" ".join(classes)}"' if classes else ""
        return f"<{tag}{attr}>{esc(value)}</{tag}>"

    head = "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"


def figure(png, alt, caption):
    """A figure embedded as a base64 PNG data URI."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError(f"{alt}: not a PNG")
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def paragraph(text, cls="note"):
    return f'<p class="{cls}">{esc(text)}</p>'


def _text(value):
    """A value of a CSV row as the file wrote it: true/false, numbers without a trailing .0."""
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def _values(runs, column):
    """The distinct non-empty values of column over runs as text, in first-seen order, with their run counts."""
    return Counter(_text(r[column]) for r in runs if r.get(column) is not None and r.get(column) != "")


def study(runs):
    """The study as the runs resolved it: each parameter with the value every run shares, or the values it took
    (with how many runs each), and the repetitions."""
    rows = []
    for column in STUDY_COLUMNS:
        counts = _values(runs, column)
        if not counts:
            continue
        if len(counts) == 1:
            value, n = next(iter(counts.items()))
            rows.append([column, value, "all runs" if n == len(runs) else f"{n} runs (the others: none)"])
        else:
            rows.append([column, ", ".join(str(v) for v in counts), "; ".join(f"{v}: {n}" for v, n in counts.items())])
    reps = Counter(r["rep"] for r in runs)
    rows.append(["rep", ", ".join(str(v) for v in sorted(reps)), f"{len(runs)} runs, "
                 f"{sum(r['valid'] is True for r in runs)} valid"])
    return table(["parameter", "value(s)", "runs"], rows)


def provenance(runs, prov_rows):
    """Where and how the runs ran: runs.csv's library, commit and host, the time span, and provenance.csv's
    command lines, folders and launchers (distinct values with their run counts; every run in a collapsed list)."""
    rows = []
    starts = sorted(r["utc_start"] for r in runs if r.get("utc_start"))
    if starts:
        rows.append(["utc_start", f"{starts[0]} to {starts[-1]}" if starts[-1] != starts[0] else starts[0],
                     len(starts)])
    for column in RUN_PROVENANCE:
        for value, n in _values(runs, column).items():
            rows.append([column, value, n])
    columns = [c for c in SCHEMAS["provenance.csv"] if c != "run_id"]
    for column in columns:
        for value, n in _values(prov_rows, column).items():
            rows.append([column, value, n])
    out = table(["what", "value", "runs"], rows)
    if not prov_rows:
        out += paragraph("No provenance.csv in this folder (written by mcmclb since it records command lines): "
                         "only runs.csv's columns are shown.")
    header = ["run_id", "backend", "platform", "utc_start"] + RUN_PROVENANCE
    per_run = [[r.get(c) for c in header] for r in runs]
    out += (f"<details><summary>every run ({len(runs)})</summary>{table(header, per_run)}</details>")
    return out


def read_any_csv(path):
    """(header, rows) of any CSV file (a compare CSV, whatever its columns): InputError for a file that is not a
    regular, non-empty UTF-8 CSV file with a header and rows of its width."""
    allowed = "a CSV file with a header, as `mcmclb compare --csv` writes it"
    try:
        with open_regular(path, allowed, newline="", encoding="utf-8-sig") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV file (allowed: UTF-8 text)") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    if "\0" in text:
        raise InputError(f"{path}: contains NUL bytes (allowed: {allowed})")
    try:
        records = [r for r in csv.reader(text.splitlines()) if r]
    except csv.Error as e:
        raise InputError(f"{path}: malformed CSV ({e})") from None
    if not records:
        raise InputError(f"{path}: empty file (allowed: {allowed})")
    header, rows = records[0], records[1:]
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise InputError(f"{path}: row {number} has {len(row)} fields, the header has {len(header)}")
    return header, rows


def page(title, sections):
    """The whole page: title and sections, each (heading, HTML body)."""
    parts = [f"<h2>{esc(heading)}</h2>\n{body}" for heading, body in sections]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n" +
            "\n".join(parts) + "\n</body></html>\n")
