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
