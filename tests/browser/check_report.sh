#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Opens report.py's HTML page in a headless Chromium and checks that it renders: every <img> decoded (complete,
# naturalWidth > 0), as many images as the page holds, and nothing fetched from outside the page; then takes a
# full-page screenshot. Not part of ctest (CI has no browser): run it by hand after changing the report, with
# Debian's chromium installed (`./bootstrap.sh --browser`).
#
#   tests/browser/check_report.sh [--screenshot FILE.png] [REPORT.html]
#
# Without REPORT it makes one: build/mcmclb sweep configs/quick.yaml --launcher local into a temporary folder (a
# minute on 2 cores), then plots/report.py --html. As a control, a copy of the page with one image's data cut
# short must fail the same check, so a check that cannot fail is noticed. Exit 0: all good; 1: the page failed;
# 2: bad arguments or no browser.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
screenshot=""
report=""
while [ $# -gt 0 ]; do
  case "$1" in
    --screenshot) [ $# -ge 2 ] || { echo "check_report.sh: --screenshot needs a FILE.png" >&2; exit 2; }
                  screenshot=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "check_report.sh: unknown option $1 (allowed: --screenshot FILE.png, REPORT.html)" >&2; exit 2 ;;
    *) [ -z "$report" ] || { echo "check_report.sh: one REPORT.html at most" >&2; exit 2; }
       report=$1; shift ;;
  esac
done
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "check_report.sh: no chromium on PATH (install it: ./bootstrap.sh --browser, or apt-get install chromium)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/mcmclb-browser-XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -z "$report" ]; then
  [ -x "$here/build/mcmclb" ] ||
    { echo "check_report.sh: no build/mcmclb (build it first, see README.md)" >&2; exit 2; }
  (cd "$here" && build/mcmclb sweep configs/quick.yaml --launcher local --out "$work/quick" >"$work/sweep.log" 2>&1) ||
    { echo "check_report.sh: the quick sweep failed ($(tail -1 "$work/sweep.log"))" >&2; exit 1; }
  /usr/bin/python3 "$here/plots/report.py" "$work/quick" --html "$work/report.html" >/dev/null
  report=$work/report.html
fi
[ -f "$report" ] ||
  { echo "check_report.sh: $report: no such file (allowed: an HTML page from report.py)" >&2; exit 2; }
[ -z "$screenshot" ] && screenshot=${TMPDIR:-/tmp}/mcmclb-report.png

# Chromium as root needs --no-sandbox; the profile lives in the temporary folder, so nothing is left behind.
chrome=("$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions
        --user-data-dir="$work/profile" --virtual-time-budget=10000)

# check PAGE: the probe (a copy of PAGE with a script that records, on load, what rendered into <body>'s
# attributes; the report itself has no script) rendered by the browser, its DOM read back. Prints one line.
check() {
  /usr/bin/python3 "$here/tests/browser/probe.py" inject "$1" "$work/probe.html" &&
    "${chrome[@]}" --dump-dom "file://$work/probe.html" 2>"$work/chrome.log" >"$work/dom.html" &&
    /usr/bin/python3 "$here/tests/browser/probe.py" verdict "$1" "$work/dom.html"
}

status=0
check "$report" || status=1
/usr/bin/python3 "$here/tests/browser/probe.py" break "$report" "$work/broken.html"
if check "$work/broken.html" >"$work/control.txt"; then
  echo "check_report.sh: the control (an image cut short) passed too: the check cannot fail" >&2
  status=1
else
  echo "control: a copy with one image cut short fails as it should ($(cat "$work/control.txt"))"
fi
"${chrome[@]}" --screenshot="$screenshot" --window-size=1200,4000 "file://$(realpath "$report")" \
  2>"$work/chrome.log" >/dev/null
if [ ! -s "$screenshot" ]; then
  echo "check_report.sh: no screenshot written ($(tail -1 "$work/chrome.log"))" >&2
  status=1
else
  echo "screenshot: $screenshot"
fi
exit $status
