"""Shared by the plot and table scripts: reading mcmclb CSV files with one-line errors, and writing figures."""
import csv
import os
import sys


class InputError(Exception):
    """Bad input: reported as one line on stderr, exit code 2."""


def fail(script, message):
    print(f"{os.path.basename(script)}: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path, required, numeric=()):
    """Rows of the CSV file at path as dicts; required columns must exist; numeric columns become floats.

    Raises InputError (one line naming the file) for a missing, empty or malformed file. For a results folder,
    resolve the file name first with find_csv().
    """
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder, expected a CSV file")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None:
                raise InputError(f"{path}: empty file, expected a CSV header with columns {', '.join(required)}")
            missing = [c for c in required if c not in reader.fieldnames]
            if missing:
                raise InputError(f"{path}: malformed, missing column(s) {', '.join(missing)}")
            rows = []
            for line_no, row in enumerate(reader, start=2):
                if None in row or any(row[c] is None for c in required):
                    raise InputError(f"{path}:{line_no}: malformed row (wrong number of fields)")
                for c in numeric:
                    try:
                        row[c] = float(row[c])
                    except ValueError:
                        raise InputError(f"{path}:{line_no}: column {c} is not a number: {row[c]!r}") from None
                rows.append(row)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV file") from None
    except csv.Error as e:
        raise InputError(f"{path}: malformed CSV ({e})") from None
    if not rows:
        raise InputError(f"{path}: no data rows")
    return rows


def find_csv(path, name):
    """path itself if it is a file, else path/name (a results folder)."""
    return os.path.join(path, name) if os.path.isdir(path) else path


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def run_label(row):
    """A run's balancer set-up, e.g. 'collective(4) create' or 'async intercomm'."""
    name = row["balancer"]
    if row.get("interval"):
        name += f"({row['interval']})"
    if row.get("method"):
        name += f" {row['method']}"
    return name


RUN_COLUMNS = ["run_id", "nprocs", "balancer", "interval", "method", "rep", "time_s", "ideal_s", "baseline_s",
               "regroups_avg", "regroups_std", "regroups_min", "regroups_max", "valid"]
RUN_NUMERIC = ["nprocs", "time_s", "ideal_s", "baseline_s", "regroups_avg", "regroups_std", "regroups_min",
               "regroups_max"]


def read_runs(paths):
    """runs.csv rows from result folders or files (several folders may be combined)."""
    rows = []
    for path in paths:
        rows += read_rows(find_csv(path, "runs.csv"), RUN_COLUMNS, numeric=RUN_NUMERIC)
    return rows


def output_path(args_output, first_input, name):
    if args_output:
        return args_output
    folder = first_input if os.path.isdir(first_input) else (os.path.dirname(first_input) or ".")
    return os.path.join(folder, name)


def pyplot():
    """matplotlib's pyplot with the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, pdf=False):
    """Writes fig as PNG at path (and as PDF beside it when pdf) and says so."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    if pdf:
        fig.savefig(os.path.splitext(path)[0] + ".pdf")
    print(f"wrote {path}")
