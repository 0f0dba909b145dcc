#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# .ci/run must run the README's test command verbatim: its command line must appear in README.md as is.
set -euo pipefail
root=$1
cmd=$(grep -v '^#' "$root/.ci/run" | grep -v '^set ' | grep -v '^cd ' | sed '/^\s*$/d')
[ "$(printf '%s\n' "$cmd" | wc -l)" -eq 1 ] || { echo ".ci/run must hold exactly one command line"; exit 1; }
grep -qxF "$cmd" "$root/README.md" || { echo "README.md lacks the .ci/run command: $cmd"; exit 1; }
echo "ok: README holds .ci/run's command"
