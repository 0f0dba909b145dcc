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
# smpi_clock_preload DIR: exports LD_PRELOAD with DIR/libmcmclb_smpi_clock.so (built beside mcmclb-sim; apps/smpi_clock.c
# says why) when it exists and the flags turn SimGrid's simulation of the measured computation off, as mcmclb sweep
# does: SMPI then reads the thread CPU clock around every MPI call for nothing, and the preload answers it with zero.
# It changes the host's cost only; every run records it (provenance smpi_clock_preload).
smpi_clock_preload() {
  local flag simulated=1
  for flag in "${smpi_flags[@]}"; do
    case "$flag" in
      --cfg=smpi/simulate-computation:no | --cfg=smpi/simulate-computation:off | \
        --cfg=smpi/simulate-computation:false | --cfg=smpi/simulate-computation:0) simulated=0 ;;
      --cfg=smpi/simulate-computation:*) simulated=1 ;;
    esac
  done
  [ "$simulated" = 0 ] && [ -f "$1/libmcmclb_smpi_clock.so" ] || return 0
  export LD_PRELOAD="$(cd "$1" && pwd)/libmcmclb_smpi_clock.so${LD_PRELOAD:+ $LD_PRELOAD}"
}
