// The five communicator creation methods (mcmclb/comm_create.hpp) and their factory.
#include "mcmclb/comm_create.hpp"

#include <algorithm>
#include <array>

#include "mcmclb/text.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

/// The simulation build's communicator for members (bridge ranks, in order): taken from SMPI with
/// MPI_Comm_create_group after the method's MPICH messages were replayed. SMPI's constructor adds one bcast over
/// the new group, which stands for MPICH's init_comm_seq bcast in MPIR_Comm_commit (docs/smpi-patterns.md).
mpi::Comm take_from_simulator(const mpi::Comm& bridge, std::span<const int> members, int tag) {
  const mpi::Group group = mpi::Group::include(bridge.group(), members);
  MPI_Comm out = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(bridge.get(), group.get(), tag, &out), "MPI_Comm_create_group");
  return mpi::Comm::adopt(out);
}

/// The simulation build's private duplicate of the parent for the replayed messages; none on real MPI.
mpi::Comm simulation_bridge(const mpi::Comm& parent) { return mpi::kSimulated ? parent.dup() : mpi::Comm{}; }

/// Algorithm 1; handshakes run on a private duplicate of the parent made once at construction.
class IntercommCreator final : public CommCreator {
 public:
  explicit IntercommCreator(const mpi::Comm& parent) : CommCreator(parent), bridge_(parent.dup()) {}
  std::string_view name() const noexcept override { return "intercomm"; }
  bool group_collective() const noexcept override { return true; }

 protected:
  mpi::Comm do_create(const mpi::Group&, std::span<const int> parent_ranks, int group_rank, int tag) override {
    return intercomm_create_merge(bridge_, parent_ranks, group_rank, tag);
  }

 private:
  mpi::Comm bridge_;
};

class CreateGroupCreator final : public CommCreator {
 public:
  explicit CreateGroupCreator(const mpi::Comm& parent) : CommCreator(parent), bridge_(simulation_bridge(parent)) {}
  std::string_view name() const noexcept override { return "create_group"; }
  bool group_collective() const noexcept override { return true; }

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) override {
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_create_group(bridge_, parent_ranks, group_rank, tag);
      return take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create_group(parent().get(), group.get(), tag, &out), "MPI_Comm_create_group");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

#if MCMCLB_HAVE_COMM_CREATE_FROM_GROUP
class FromGroupCreator final : public CommCreator {
 public:
  explicit FromGroupCreator(const mpi::Comm& parent) : CommCreator(parent) {}
  std::string_view name() const noexcept override { return "from_group"; }
  bool group_collective() const noexcept override { return true; }

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int>, int, int tag) override {
    // The string tag plays the role of the integer tag: concurrent creations over overlapping groups must
    // differ in it, exactly as the integer tag of the other methods.
    const std::string string_tag = "mcmclb.from_group." + std::to_string(tag);
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create_from_group(group.get(), string_tag.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &out),
               "MPI_Comm_create_from_group");
    return mpi::Comm::adopt(out);
  }
};
#endif

/// The simulation build's from_group (SMPI reports MPI 3.1: no MPI_Comm_create_from_group): what MPICH 4.0.2
/// does for it, create_group over MPI_COMM_WORLD (MPIR_Comm_create_from_group_impl).
class SimulatedFromGroupCreator final : public CommCreator {
 public:
  explicit SimulatedFromGroupCreator(const mpi::Comm& parent)
      : CommCreator(parent), world_(mpi::Comm::world().dup()), world_group_(world_.group()) {}
  std::string_view name() const noexcept override { return "from_group"; }
  bool group_collective() const noexcept override { return true; }

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int>, int group_rank, int tag) override {
    const std::vector<int> world_ranks = parent_ranks_of(group, world_group_, name());
    smpi_patterns::comm_create_group(world_, world_ranks, group_rank, tag);
    return take_from_simulator(world_, world_ranks, tag);
  }

 private:
  mpi::Comm world_;
  mpi::Group world_group_;
};

class CreateCreator final : public CommCreator {
 public:
  explicit CreateCreator(const mpi::Comm& parent) : CommCreator(parent), bridge_(simulation_bridge(parent)) {}
  std::string_view name() const noexcept override { return "create"; }
  bool group_collective() const noexcept override { return false; }

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) override {
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_create(bridge_, tag);
      return group_rank == MPI_UNDEFINED ? mpi::Comm{} : take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create(parent().get(), group.get(), &out), "MPI_Comm_create");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

class SplitCreator final : public CommCreator {
 public:
  explicit SplitCreator(const mpi::Comm& parent) : CommCreator(parent), bridge_(simulation_bridge(parent)) {}
  std::string_view name() const noexcept override { return "split"; }
  bool group_collective() const noexcept override { return false; }

 protected:
  mpi::Comm do_create(const mpi::Group&, std::span<const int> parent_ranks, int group_rank, int tag) override {
    // Disjoint groups get distinct colours: the smallest parent rank of each group is unique to it.
    const int color =
        group_rank == MPI_UNDEFINED ? MPI_UNDEFINED : *std::min_element(parent_ranks.begin(), parent_ranks.end());
    const int key = group_rank == MPI_UNDEFINED ? 0 : group_rank;
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_split(bridge_, color, key, tag);
      return group_rank == MPI_UNDEFINED ? mpi::Comm{} : take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_split(parent().get(), color, key, &out), "MPI_Comm_split");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

}  // namespace

CommCreator::CommCreator(const mpi::Comm& parent)
    : parent_(mpi::Comm::view(parent.get())), parent_group_(parent.group()) {}

mpi::Comm CommCreator::create(const mpi::Group& group, int tag) {
  mpi::check_tag(tag);
  const int group_rank = group.rank();
  if (group_rank == MPI_UNDEFINED && group_collective()) return {};  // outside: no communication at all
  return do_create(group, parent_ranks_of(group, parent_group_, name()), group_rank, tag);
}

std::vector<int> parent_ranks_of(const mpi::Group& group, const mpi::Group& parent_group, std::string_view who) {
  std::vector<int> parent_ranks = group.translate_all(parent_group);
  if (std::find(parent_ranks.begin(), parent_ranks.end(), MPI_UNDEFINED) != parent_ranks.end()) {
    throw mpi::UsageError(std::string(who) + ": the group is not a subset of the parent communicator's group",
                          MPI_ERR_GROUP);
  }
  return parent_ranks;
}

bool from_group_supported() noexcept { return MCMCLB_HAVE_COMM_CREATE_FROM_GROUP != 0 || mpi::kSimulated; }

namespace {

template <typename Creator>
std::unique_ptr<CommCreator> make(const mpi::Comm& parent) {
  return std::make_unique<Creator>(parent);
}

std::unique_ptr<CommCreator> make_from_group([[maybe_unused]] const mpi::Comm& parent) {
  if constexpr (mpi::kSimulated) return std::make_unique<SimulatedFromGroupCreator>(parent);
#if MCMCLB_HAVE_COMM_CREATE_FROM_GROUP
  return std::make_unique<FromGroupCreator>(parent);
#else
  throw mpi::UsageError("method from_group: MPI_Comm_create_from_group is not supported by " + mpi::library_version(),
                        MPI_ERR_UNSUPPORTED_OPERATION);
#endif
}

/// The registry: one line per method, in the order users see them.
struct Method {
  std::string_view name;
  std::unique_ptr<CommCreator> (*make)(const mpi::Comm& parent);
};
constexpr std::array<Method, 5> kMethods = {{
    {"intercomm", make<IntercommCreator>},
    {"create_group", make<CreateGroupCreator>},
    {"from_group", make_from_group},
    {"create", make<CreateCreator>},
    {"split", make<SplitCreator>},
}};

constexpr std::array<std::string_view, kMethods.size()> kNames = [] {
  std::array<std::string_view, kMethods.size()> names{};
  for (std::size_t i = 0; i < kMethods.size(); ++i) names[i] = kMethods[i].name;
  return names;
}();

}  // namespace

std::span<const std::string_view> comm_creator_names() { return kNames; }

std::unique_ptr<CommCreator> make_comm_creator(std::string_view name, const mpi::Comm& parent) {
  for (const auto& m : kMethods) {
    if (m.name == name) return m.make(parent);
  }
  throw mpi::UsageError(
      "unknown communicator creation method '" + std::string(name) + "' (known: " + join(kNames) + ")", MPI_ERR_ARG);
}

mpi::Comm intercomm_create_merge(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag) {
  if constexpr (mpi::kSimulated) {
    // SMPI aborts in MPI_Intercomm_create/merge: replay the messages MPICH 4.0.2 sends for Algorithm 1, then take
    // the communicator over the whole group from the simulator in one step (docs/smpi-patterns.md).
    smpi_patterns::intercomm_create_merge(bridge, parent_ranks, group_rank, tag);
    return take_from_simulator(bridge, parent_ranks, tag);
  }
  const int group_size = static_cast<int>(parent_ranks.size());
  // Start from a private copy of MPI_COMM_SELF. Not MPI_Comm_dup: a dup is collective over MPI_COMM_SELF, and
  // threads of one process calling it concurrently make the program erroneous. MPI_Comm_create_group is the
  // constructor MPI-4.1 Sect. 8.4.2 lets threads call concurrently: "If multiple threads at a given MPI process
  // perform concurrent MPI_COMM_CREATE_GROUP operations, the user must distinguish these operations by providing
  // different tag or comm arguments" -- the caller's distinct tag does exactly that.
  const mpi::Group self_group = mpi::Comm::self().group();
  MPI_Comm self_copy = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(MPI_COMM_SELF, self_group.get(), tag, &self_copy), "MPI_Comm_create_group");
  mpi::Comm current = mpi::Comm::adopt(self_copy);
  for (int merge_size = 1; merge_size < group_size; merge_size *= 2) {
    const int block = group_rank / merge_size;  // the paper's gid: this caller's block of merge_size members
    int remote_leader = -1;
    int high = 0;
    if (block % 2 == 0) {
      if ((block + 1) * merge_size >= group_size) continue;  // no right neighbour: join in a later round
      remote_leader = parent_ranks[static_cast<std::size_t>((block + 1) * merge_size)];
      high = 0;  // LOW: our block keeps the lower ranks
    } else {
      remote_leader = parent_ranks[static_cast<std::size_t>((block - 1) * merge_size)];
      high = 1;
    }
    MPI_Comm inter = MPI_COMM_NULL;
    mpi::check(MPI_Intercomm_create(current.get(), 0, bridge.get(), remote_leader, tag, &inter),
               "MPI_Intercomm_create");
    mpi::Comm inter_owned = mpi::Comm::adopt(inter);
    MPI_Comm merged = MPI_COMM_NULL;
    mpi::check(MPI_Intercomm_merge(inter, high, &merged), "MPI_Intercomm_merge");
    current = mpi::Comm::adopt(merged);  // frees the previous intracommunicator; inter_owned frees at scope end
  }
  return current;
}

}  // namespace mcmclb
