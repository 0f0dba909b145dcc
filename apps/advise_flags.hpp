// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s flags (apps/cli_flags.hpp): the table its parser accepts (apps/advise.cpp), and from which
// its refusals, `mcmclb --help` and `mcmclb advise --help` are written.
#pragma once

#include <array>
#include <string>

#include "cli_flags.hpp"

namespace mcmclb {

inline constexpr std::array<CliFlag, 24> kAdviseFlags = {{
    {"--ranks", "P[,P...]", true, "the rank counts to advise at, 2 to 2^20"},
    {"--copies", "", false, "advise copies of the recorded walkers, a group each, not the walkers as recorded"},
    {"--group-size", "G", false, "the copies' initial groups of G ranks (implies --copies)"},
    {"--chains-per-group", "W", false, "W copies per initial group (implies --copies)"},
    {"--balancers", "B[,B...]", false, "the balancers to rank (default: every registered one; none is always added)"},
    {"--draws", "N", false, "seeded draws of the chain map, or seeds of the workload, 0 to 100 (default 3)"},
    {"--tolerance", "PCT", false, "the tolerance assumed, in % (default 5); measured sources may exceed it"},
    {"--no-race", "", false,
     "simulate every set-up under every scenario (default: race, dropping those that cannot win)"},
    {"--incomplete", "", false,
     "advise on a trace whose recording did not end, assuming no speed-up it did not measure"},
    {"--check", "", false, "measure the tolerance: the trace replayed for real at a core per rank (10 times a set-up)"},
    {"--check-reps", "N", false, "--check with N real repetitions a set-up, at least 6"},
    {"--check-busy", "PCT", false,
     "the busiest host --check runs on, in % of its CPU time (default 10); a busier one refuses the check"},
    {"--platform", "FILE", false,
     "the SimGrid platform (default configs/platforms/fattree.xml, a modern cluster; mcmclb calibrate writes yours)"},
    {"--prediction", "FILE", false,
     "the simulation's error measured on --platform (plots/prediction_check.py writes it), a source of the tolerance"},
    {"--plan-from", "FILE", false,
     "a trace of the same walkers and items that pays and the planning balancers consult instead (a known truth "
     "priced as its recording plans it)"},
    {"--sim-binary", "FILE", false, "the simulation build's program (default build-sim/mcmclb-sim)"},
    {"--smpi-flags", "FILE", false, "smpirun's flags, one per line (default configs/platforms/smpi.cfg)"},
    {"--out", "DIR", false, "the output folder, resumable (default results/advise-NAME-PRANKS)"},
    {"--jobs", "N", false, "simulations at once (default: the host's cores; with --launcher slurm, 16 a job)"},
    {"--launcher", "local|slurm", false, "simulate on this host (default), or as job steps of Slurm batch jobs"},
    {"--partition", "NAME", false, "sbatch's --partition (with --launcher slurm)"},
    {"--account", "NAME", false, "sbatch's --account (with --launcher slurm)"},
    {"--dry-run", "", false, "print the plan and the time estimate; run and write nothing"},
    {"--print-run-flags", "", false,
     "print on stdout only the advised set-up's flags, for $(...); all else goes to stderr (one rank count)"},
}};

/// The usage line of `mcmclb advise`, every flag of the table in it.
inline std::string advise_usage() { return "mcmclb advise TRACE.csv|STUDY.yaml " + flags_usage(kAdviseFlags); }

}  // namespace mcmclb
