#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CI formatting check: every tracked C and C++ source (*.cpp *.hpp *.h *.c, from git ls-files) must be formatted
# with the repository's .clang-format. Lists the offending files and how to fix them. CI is a git clone, so a
# missing clang-format or a tree that is not a git checkout is a failure, not a skip.
# Usage: check_format.sh <source dir>
set -euo pipefail
src=$1
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (run ./bootstrap.sh)" >&2; exit 1; }
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "format: $src is not a git checkout; the check lists files with git ls-files" >&2; exit 1; }
cd "$src"
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.c')
[ ${#files[@]} -gt 0 ] || { echo "format: no C/C++ files tracked under $src" >&2; exit 1; }
present=()
for f in "${files[@]}"; do
  [ -f "$f" ] && present+=("$f")  # skips a file deleted in the work tree but not yet in the index
done
# One clang-format for every file (a process per file spent 12 s of the test command, mostly starting up); only
# when it finds something, a pass file by file names the offenders.
bad=()
if ! clang-format --dry-run -Werror "${present[@]}" >/dev/null 2>&1; then
  for f in "${present[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  [ ${#bad[@]} -gt 0 ] || { clang-format --dry-run -Werror "${present[@]}"; exit 1; }  # failed, yet no file did
fi
echo "format: $(clang-format --version | head -1); ${#files[@]} files checked, ${#bad[@]} not formatted"
if [ ${#bad[@]} -gt 0 ]; then
  printf '  %s\n' "${bad[@]}"
  echo "fix: clang-format -i ${bad[*]}"
  exit 1
fi
