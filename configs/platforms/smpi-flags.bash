# Sourced by the scripts that call smpirun themselves (tests/smpi/run_*.sh, plots/fig1-sim.sh): sets the array
# smpi_flags to the flags of smpi.cfg beside this file, their one source (one per line, blank lines and # comments
# skipped), and exports MCMCLB_SMPI_CFG, which every simulated run records (provenance simgrid_cfg).
mapfile -t smpi_flags < <(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' \
  "$(dirname "${BASH_SOURCE[0]}")/smpi.cfg" | grep -Ev '^(#|$)')
export MCMCLB_SMPI_CFG="${smpi_flags[*]}"
