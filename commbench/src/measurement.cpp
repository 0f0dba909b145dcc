// SPDX-License-Identifier: BSD-3-Clause
// mcmclb/commbench.hpp: what commbench measures (the creation methods and the timing floor), Measurement (the one
// timed code path, whichever loop repeats it) and the live-communicator count.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/commbench.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb::commbench {

namespace {

constexpr int kTag = 11;

/// Not a creation method but the timing floor, measured beside them: every rank's iteration makes nothing, so it
/// times what the loop itself costs (clock reads and a call that returns at once; on oversubscribed cores also a
/// rank just woken from the barrier with cold caches). An operation cheaper than a few hundred ns (range) cannot
/// be told apart from this floor, so it is printed beside it.
constexpr MethodInfo kFloor{.name = mcmclb::kCommbenchFloor, .group_collective = false, .contiguous_only = true};

class FloorCreator final : public GroupCommCreator {
 public:
  FloorCreator() : GroupCommCreator(kFloor) {}
  std::unique_ptr<GroupComm> create(const mpi::Group&, int) override { return nullptr; }
  std::unique_ptr<GroupComm> create_range(int, int, int) override { return nullptr; }
};

/// Collective over world: the creator of what method names.
std::unique_ptr<GroupCommCreator> make_creator(std::string_view method, const mpi::Comm& world) {
  if (method == kFloor.name) return std::make_unique<FloorCreator>();
  return make_group_comm_creator(method, world);
}

/// The library's words in one line: MPICH's error stack is a line per layer, whose last line says what ran out.
std::string last_line(const std::string& text) {
  std::string line, last;
  std::stringstream in(text);
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos) last = line.substr(first);
  }
  return last;
}

}  // namespace

std::vector<MethodInfo> measured_methods() {
  const auto methods = creation_methods();
  std::vector<MethodInfo> all(methods.begin(), methods.end());
  all.push_back(kFloor);
  return all;
}

std::vector<std::string_view> method_names() {
  std::vector<std::string_view> names;
  for (const auto& m : measured_methods()) names.push_back(m.name);
  return names;
}

/// Collective over world: communicators over every rank made by method, all kept alive, until the library refuses
/// one or cap are live; then all are freed. After every creation the ranks agree over world (which takes no new
/// context id) whether any was refused, so a refused rank never leaves the others inside a creation it will not
/// join. That holds as long as the library refuses a creation on all of its members alike, which it does here:
/// every live communicator spans every rank, so every rank holds the same context ids.
LiveCount count_live(const std::string& method, int cap, const mpi::Comm& world) {
  const auto creator = make_creator(method, world);
  std::vector<int> ranks(static_cast<std::size_t>(world.size()));
  std::iota(ranks.begin(), ranks.end(), 0);
  const mpi::Group everyone = mpi::Group::include(world.group(), ranks);
  std::vector<std::unique_ptr<GroupComm>> live;
  std::string error;
  int refused = 0;
  while (!refused && static_cast<int>(live.size()) < cap) {
    try {
      live.push_back(creator->info().contiguous_only ? creator->create_range(0, world.size() - 1, kTag)
                                                     : creator->create(everyone, kTag));
    } catch (const mpi::Error& e) {
      refused = 1;
      error = e.call() + ": " + last_line(e.library_text());
    }
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_MAX, world.get()), "MPI_Allreduce");
  }
  LiveCount count{.method = method, .live = static_cast<int>(live.size()), .refused = refused != 0, .error = {}};
  int first_refused = error.empty() ? world.size() : world.rank();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &first_refused, 1, MPI_INT, MPI_MIN, world.get()), "MPI_Allreduce");
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &count.live, 1, MPI_INT, MPI_MIN, world.get()), "MPI_Allreduce");
  if (first_refused < world.size()) count.error = mpi::bcast_text(error, first_refused, world);
  for (auto& comm : live) {
    if (comm) comm->free();
  }
  return count;
}

std::string spec_name(const Spec& s) {
  return s.method + "/" + (s.op == Op::create ? "create" : "free") +
         (s.group_size > 0 ? "/size:" + std::to_string(s.group_size) : std::string("/groups"));
}

double median_in_place(std::vector<double>& t) {
  const auto mid = t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2);
  std::nth_element(t.begin(), mid, t.end());
  if (t.size() % 2 == 1) return *mid;
  return 0.5 * (*std::max_element(t.begin(), mid) + *mid);  // the lower half holds the other middle value
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement: the one code path that times an operation, whichever loop repeats it.

Measurement::Measurement(const Spec& spec, const mpi::Comm& world, const std::vector<int>& layout)
    : spec_(spec), world_(world) {
  // The group this rank measures: [0, size) for a size, else its own group of the --groups layout.
  if (spec.group_size > 0) {
    last_ = spec.group_size - 1;
  } else {
    for (const int size : layout) {
      last_ = first_ + size - 1;
      if (world.rank() <= last_) break;
      first_ = last_ + 1;
    }
  }
  creator_ = make_creator(spec.method, world);
  const bool group_collective = creator_->group_collective();
  if (creator_->info().contiguous_only) {  // creates from the bounds: no MPI group
    takes_part_ = !group_collective || (first_ <= world.rank() && world.rank() <= last_);
    return;
  }
  std::vector<int> ranks;
  for (int i = first_; i <= last_; ++i) ranks.push_back(i);
  group_ = mpi::Group::include(world.group(), ranks);
  takes_part_ = !group_collective || group_.rank() != MPI_UNDEFINED;
}

std::unique_ptr<GroupComm> Measurement::create() {
  return creator_->info().contiguous_only ? creator_->create_range(first_, last_, kTag)
                                          : creator_->create(group_, kTag);
}

double Measurement::once() {
  std::unique_ptr<GroupComm> made;
  if (spec_.op == Op::free && takes_part_) made = create();
  mpi::check(MPI_Barrier(world_.get()), "MPI_Barrier");
  const double start = MPI_Wtime();
  if (takes_part_) {
    if (spec_.op == Op::create) {
      made = create();
    } else if (made) {
      made->free();
    }
  }
  const double elapsed = MPI_Wtime() - start;
  if (made) made->free();  // after the timed free this frees nothing
  return mpi::max_politely(world_, elapsed);
}

}  // namespace mcmclb::commbench
