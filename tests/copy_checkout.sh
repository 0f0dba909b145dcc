#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# copy_checkout.sh SRC DEST: the checkout SRC as a fresh clone of it would hold it, with what is not committed yet:
# its tracked and new files (not ignored ones, so no build or results folder) and its git folder, which provenance
# reads the commit from. The tests that run what a user runs from a fresh clone start from this copy.
set -euo pipefail
src=$1
dest=$2
mkdir -p "$dest"
(cd "$src" && git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
  tar -C "$dest" -xf -
if [ -d "$src/.git" ]; then cp -a "$src/.git" "$dest/.git"; fi
