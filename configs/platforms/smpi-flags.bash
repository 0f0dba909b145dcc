# Sourced by the scripts that call smpirun themselves (tests/smpi/run_*.sh, plots/fig1-sim.sh): sets the array
# smpi_flags to the flags of smpi.cfg beside this file, their one source (one per line, blank lines and # comments
# skipped), and exports MCMCLB_SMPI_CFG, which every simulated run records (provenance simgrid_cfg).
mapfile -t smpi_flags < <(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' \
  "$(dirname "${BASH_SOURCE[0]}")/smpi.cfg" | grep -Ev '^(#|$)')
export MCMCLB_SMPI_CFG="${smpi_flags[*]}"
# smpi_hostfile_slots HOSTFILE: how many simulated ranks the hostfile places (a line "host:N" places N, a blank line
# none), as mcmclb sweep counts them. SimGrid gives rank i the host of line i modulo that count, so a script must
# refuse more ranks than this: beyond it ranks would share cores without a word.
smpi_hostfile_slots() {
  awk '{ gsub(/^[ \t\r]+|[ \t\r]+$/, "") } $0 == "" { next }
       { n = split($0, part, ":"); if (n > 1 && part[n] ~ /^[0-9]+$/ && length(part[n]) <= 9) slots += part[n]; else slots += 1 }
       END { print slots + 0 }' "$1"
}
# smpi_mapping_refusal P: nothing when one simulation of P ranks fits the host's limit on memory mappings
# (vm.max_map_count), else the one line that says why not, as mcmclb sweep words it (apps/launch_smpi.cpp says where
# the counts come from: SimGrid 3.32 gives each rank's stack a guard page, two mappings per rank, plus about 200 for
# the process; --cfg=contexts/guard-size:0 among the flags lets the kernel merge them). Past it SimGrid dies at
# simulated time 0 ("Failed to protect stack").
smpi_mapping_refusal() {
  local limit needed=$((2 * $1 + 512)) flag
  for flag in "${smpi_flags[@]}"; do [ "$flag" = "--cfg=contexts/guard-size:0" ] && return 0; done
  limit=$(cat /proc/sys/vm/max_map_count 2>/dev/null) || return 0
  [[ $limit =~ ^[0-9]+$ ]] && [ "$needed" -gt "$limit" ] || return 0
  echo "P = $1 simulated ranks need about $needed memory mappings (SimGrid gives each rank's stack a guard page: two" \
    "mappings per rank), but /proc/sys/vm/max_map_count allows $limit (allowed: at most $(((limit - 512) / 2)) ranks" \
    "here; raise it: sysctl -w vm.max_map_count=$((needed + needed / 4)), or add --cfg=contexts/guard-size:0 to" \
    "configs/platforms/smpi.cfg)"
}
# smpi_preload DIR: exports LD_PRELOAD with the libraries listed in DIR/smpi-preload.txt (one path per line, written
# by the simulation build beside mcmclb-sim: the CPU-clock library of apps/smpi_clock.c and the allocator;
# apps/CMakeLists.txt says why), ahead of any the caller preloads, as mcmclb sweep --launcher smpi does. They change
# the host's cost only; every run records them (provenance smpi_clock_preload, smpi_allocator). Nothing without the
# list; a listed library that is missing fails.
smpi_preload() {
  local list="$1/smpi-preload.txt" line preload=""
  [ -f "$list" ] || return 0
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    [ -f "$line" ] || { echo "$list: '$line' is not an existing library (rebuild the simulation build)" >&2; return 1; }
    preload="${preload:+$preload }$line"
  done <"$list"
  [ -z "$preload" ] || export LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"
}
