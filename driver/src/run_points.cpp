// SPDX-License-Identifier: BSD-3-Clause
// The points of one launch run in order (mcmclb/run_points.hpp).
#include "mcmclb/run_points.hpp"

#include <cstdio>
#include <cstdlib>

#include "mcmclb/balancer.hpp"
#include "mcmclb/driver.hpp"

namespace mcmclb {

std::optional<results::ResultStore> open_store(const std::filesystem::path& out, const std::string& named_as,
                                               const mpi::Comm& world) {
  std::optional<results::ResultStore> store;
  std::string error;
  if (world.rank() == 0) {
    try {
      store = open_results(out);
    } catch (const results::StoreError& e) {
      error = named_as + ": " + std::string(e.what());
    }
  }
  share_root_error<InputError>(error, world);
  return store;
}

std::vector<std::size_t> drop_done_points(const Study& study, const std::vector<std::size_t>& selected,
                                          const std::optional<results::ResultStore>& store, const Backend& backend,
                                          const mpi::Comm& world) {
  std::vector<char> skip(selected.size(), 0);
  std::string error;
  if (world.rank() == 0) {
    try {
      const auto recorded = store->recorded_points();
      for (std::size_t k = 0; k < selected.size(); ++k) {
        const auto at = recorded.find(store_key(study.points[selected[k]].spec, backend));
        skip[k] = static_cast<char>(at != recorded.end() && at->second.done());
      }
    } catch (const results::StoreError& e) {  // e.g. a damaged journal: no work has begun
      error = e.what();
    }
  }
  share_root_error<InputError>(error, world);
  if (!skip.empty()) {
    mpi::bcast_politely(world, skip.data(), static_cast<int>(skip.size()), MPI_CHAR, 0);
  }
  std::vector<std::size_t> left;
  for (std::size_t k = 0; k < selected.size(); ++k) {
    if (!skip[k]) left.push_back(selected[k]);
  }
  if (world.rank() == 0 && left.size() < selected.size()) {
    std::printf("resume: %zu of %zu points already done in %s\n", selected.size() - left.size(), selected.size(),
                store->dir().string().c_str());
  }
  return left;
}

int run_points(const Study& study, const std::vector<std::size_t>& points, std::optional<results::ResultStore>& store,
               const std::string& command_line, const mpi::Comm& world, bool resume) {
  const int rank = world.rank();
  int invalid = 0;
  // Fault injection for the sweep's tests: MCMCLB_FAIL_POINT=<index> aborts the job when that point starts, as a
  // crashing run would.
  const char* fail_point = std::getenv("MCMCLB_FAIL_POINT");
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (fail_point != nullptr && std::to_string(points[i]) == fail_point) {
      // Rank 0 alone ends the job, after its line has reached the launcher; the others wait in the run's first
      // collective meanwhile, so none of them ends the job before the line is out.
      if (rank == 0)
        mpi::abort_with_line(world.get(), 134, std::string("mcmclb: MCMCLB_FAIL_POINT=") + fail_point + ": aborting");
    }
    RunResult r = run_once(study.points[points[i]].spec);
    std::string record_error;
    r.provenance.command_line = command_line;
    r.provenance.order = std::string(to_string(study.order));
    if (study.order == RunOrder::shuffled) r.provenance.order_seed = std::to_string(study.order_seed);
    if (!r.valid) ++invalid;
    if (rank == 0) {
      bool recorded = true;
      try {
        // --resume (sweeps, Slurm jobs): a point another writer recorded while this run worked is not recorded
        // twice. Without it a run is a deliberate repeat and appends.
        const auto if_done = resume ? results::ResultStore::IfDone::skip : results::ResultStore::IfDone::append;
        recorded = record_result(*store, r, if_done);
      } catch (const results::StoreError& e) {
        // Found after work started (disk full, another version rewrote a header; the store rolled the run back):
        // every rank learns it below and exits with the output-error code (run_main), no rank left waiting.
        record_error = std::string("cannot record the run: ") + e.what();
      }
      if (record_error.empty() && recorded) {
        std::printf("run %zu/%zu  %-28s rep %d  time %7.3f s  ideal %.3f  baseline %.3f  regroups avg %.2f  %s%s\n",
                    i + 1, points.size(), run_label(r.spec).c_str(), r.spec.rep, r.time_s, r.ideal_s, r.baseline_s,
                    r.regroups_avg, r.valid ? "valid" : "INVALID: ", r.violations.c_str());
      } else if (record_error.empty()) {
        std::printf("run %zu/%zu  %-28s rep %d  already recorded by another writer of %s: not recorded again\n", i + 1,
                    points.size(), run_label(r.spec).c_str(), r.spec.rep, store->dir().c_str());
      }
      std::fflush(stdout);
    }
    // No rank starts the next run before this one's rows are on disk: a crash in the next run must not take a
    // finished run's result with it (the others wait asleep while rank 0 writes).
    mpi::barrier_politely(world, mpi::setup_patience);
    share_root_error<OutputError>(record_error, world);
  }
  return invalid;
}

}  // namespace mcmclb
