# SPDX-License-Identifier: BSD-3-Clause
"""The tutorial of examples/ising/README.md, run as written: its six commands, in order, from the root of the
fresh copy of the checkout where the README's first block ran (tests/readme/run_path.sh). That block built and
installed mcmclb and made the simulation build by the same commands as the tutorial's first and fourth, so the
tutorial finds them made, as a reader who followed the README would. Each command's output must show what the
tutorial shows after it:
  - a line with no time in it, verbatim (the answers' hash, the chains' final numbers, the recording's counts);
  - a line with a time in it ("run: balancer none, 1.165 s, ..."), with every number allowed to differ;
  - "/..." in a line stands for a path on the reader's machine; a line "..." for lines left out.
The advice (command 4) is made from the costs this run recorded on shared cores, so its ranking may differ from
the README's: there only the first line of the advice and of the verdict are checked, up to the first
parenthesis, numbers allowed to differ.
Usage: run_tutorial.py <work dir of readme_path>"""
import os
import re
import shutil
import subprocess
import sys

README = os.path.join("examples", "ising", "README.md")
NUMBER = r"-?[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?"


def fail(message):
    print(f"tutorial: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def steps(readme_text):
    """The README's commands (```sh blocks) in order, each with the lines of the ```text blocks after it."""
    found, block, kind = [], None, None
    for line in readme_text.splitlines():
        fence = re.match(r"^```(\w*)\s*$", line)
        if fence and block is None:
            kind, block = fence.group(1), []
        elif fence:
            if kind == "sh":
                found.append(("\n".join(block), []))
            elif kind == "text" and found:
                found[-1][1].extend(block)
            block = None
        elif block is not None:
            block.append(line)
    return found


def pattern(line, advice=False):
    """A README output line as a regular expression over one printed line: numbers may differ where the line shows
    a time; "/..." is any path. An advice line is matched up to its first parenthesis, every number free."""
    if advice:
        line = line.split("(")[0]
    line = line.rstrip()
    timed = advice or re.search(NUMBER + r" s\b", line) is not None
    parts = re.split(r"(/\.\.\.|" + NUMBER + r")", line)
    out = ""
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out += re.escape(part)
        elif part == "/...":
            out += r"\S*"
        else:
            out += NUMBER if timed else re.escape(part)
    return re.compile("^" + out + ("" if advice else r"\s*$"))


def main():
    if len(sys.argv) != 2:
        fail("usage: run_tutorial.py <work dir of readme_path>")
    work = os.path.join(sys.argv[1], "src")
    if not os.path.isdir(os.path.join(work, "build")):
        fail(f"no build in {work} (the test readme_path makes it)")
    # What an earlier run of the tutorial left; the README's builds and install (build, build-sim, install) are kept.
    for leftover in ("build-ising", "ising-trace.csv", "ising-ckpt"):
        path = os.path.join(work, leftover)
        if os.path.islink(path) or os.path.isfile(path):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
    with open(os.path.join(work, README)) as f:
        found = steps(f.read())
    if len(found) != 6:
        fail(f"{README} shows {len(found)} commands; the tutorial has six")
    for number, (command, shown) in enumerate(found, 1):
        print(f"tutorial: {number}. {command}", flush=True)
        r = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True, timeout=400)
        printed = (r.stdout + r.stderr).splitlines()
        if r.returncode != 0:
            fail(f"command {number} exited {r.returncode}:\n" + "\n".join(printed[-30:]))
        advice = " advise " in command
        checked = [s for s in shown if s.strip() not in ("", "...")]
        if advice:
            checked = [s for s in checked if s.startswith(("advice at P", "verdict at P"))]
            if len(checked) != 2:
                fail(f"command {number}: the README shows no 'advice at P' and 'verdict at P' lines")
        for line in checked:
            if not any(pattern(line, advice).match(p) for p in printed):
                fail(f"command {number} printed no line like the README's\n  {line!r}\nit printed:\n" +
                     "\n".join(printed[-40:]))
        print(f"tutorial: {number}. matches the README's {len(checked)} lines", flush=True)
    print("tutorial: the six commands printed what the README shows")


if __name__ == "__main__":
    main()
