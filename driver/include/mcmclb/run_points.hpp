// SPDX-License-Identifier: BSD-3-Clause
// The points of one launch run in order (`mcmclb run`): the results folder opened on rank 0 before any work, the
// points a resume finds done left out, each run's rows recorded before the next starts; every rank learns rank 0's
// verdict, so none is left waiting. Types of a study only (mcmclb/study.hpp): no YAML is read here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb {

/// Rank 0's error (empty: none), thrown as an Error on every rank: one verdict, so no rank waits for another
/// that has left.
template <typename Error>
void share_root_error(std::string error, const mpi::Comm& world) {
  long long length = static_cast<long long>(error.size());
  mpi::bcast_politely(world, &length, 1, MPI_LONG_LONG, 0);
  error.resize(static_cast<std::size_t>(length));
  mpi::bcast_politely(world, error.data(), static_cast<int>(length), MPI_CHAR, 0);
  if (!error.empty()) throw Error(error);
}

/// Rank 0 opens the results store out (creates or checks the folder and every file's header) before any work, and
/// every rank learns the verdict: a refused folder is one line on rank 0 and exit 2 everywhere, never a rank left
/// waiting in a broadcast; named_as says where out came from in that line. Returns the store on rank 0, nothing
/// elsewhere.
std::optional<results::ResultStore> open_store(const std::filesystem::path& out, const std::string& named_as,
                                               const mpi::Comm& world);

/// --resume: rank 0 asks the store which selected points are done (recorded valid and complete: a run that lost
/// rank rows is rerun); every rank follows its decision. Returns the points left to run. A point counts as done only
/// on this run's backend and platform (a real-MPI row does not make a simulated point done, nor a row simulated on
/// another platform).
std::vector<std::size_t> drop_done_points(const Study& study, const std::vector<std::size_t>& selected,
                                          const std::optional<results::ResultStore>& store, const Backend& backend,
                                          const mpi::Comm& world);

/// Runs the points in order, persisting each run's rows before the next starts (resume: a point another writer
/// recorded meanwhile is not recorded again). Returns how many were invalid.
int run_points(const Study& study, const std::vector<std::size_t>& points, std::optional<results::ResultStore>& store,
               const std::string& command_line, const mpi::Comm& world, bool resume);

}  // namespace mcmclb
