// SPDX-License-Identifier: BSD-3-Clause
// The typed collectives and point-to-point calls of GroupComm (mcmclb/group_comm.hpp) on the communicators of every
// creation method and on a group of one, and ExactSum (mcmclb/exact_sum.hpp): exact, correctly rounded, and the
// same bits in any order and at any group size. Each group is used as an application would: doubles reduced by
// sum, min, max and a callable, a struct reduced by a callable, vectors broadcast and gathered with sizes that
// differ by member, a ring of messages, and the MPI communicator handed out.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/exact_sum.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"
#include "mpi_test.hpp"

namespace mpi = mcmclb::mpi;
namespace ops = mcmclb::ops;
using mcmclb::ExactSum;
using mcmclb::GroupComm;
using mcmclb::testing::world_rank;
using mcmclb::testing::world_size;

namespace {

uint64_t bits(double x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// Doubles over many binades and both signs, the same on every rank for a seed: sums of them round at every step.
std::vector<double> wild_doubles(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<double> xs(n);
  for (double& x : xs) x = std::ldexp(mantissa(rng), exponent(rng));
  return xs;
}

/// GroupComm's documented gather, as your-chains.md and the header's comment write it.
std::vector<double> group_all_gather(GroupComm& group, std::vector<double>& mine) {
  return group.allgatherv(std::span(mine));
}

/// What the calls that read a range accept: any contiguous range, its elements const or not.
template <class R>
concept read_as_input = requires(GroupComm& g, R r) {
  g.allgatherv(r);
  g.gatherv(r, 0);
  g.send(r, 0, 0);
};
static_assert(read_as_input<std::span<double>> && read_as_input<std::span<const double>> &&
              read_as_input<std::span<double, 2>> && read_as_input<std::vector<double>&> &&
              read_as_input<const std::vector<double>&> && read_as_input<std::array<int, 3>&>);

// ---- ExactSum alone ----

TEST(ExactSum, CancellationLosesNothing) {
  ExactSum s;
  for (const double x : {1e100, 1.0, -1e100, 1e-300, -1e-300, 3.0}) s.add(x);
  EXPECT_EQ(s.value(), 4.0);
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{max, max, -max}), max) << "an intermediate past DBL_MAX is exact";
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{max, max}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{-max, -max}), -std::numeric_limits<double>::infinity());
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(ExactSum().value(), 0.0);
}

TEST(ExactSum, InfinitiesAndNaNsFollowIeee) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{1.0, inf}), inf);
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{1.0, -inf}), -inf);
  EXPECT_TRUE(std::isnan(mcmclb::exact_sum(std::vector<double>{inf, -inf})));
  EXPECT_TRUE(std::isnan(mcmclb::exact_sum(std::vector<double>{1.0, std::nan("")})));
}

TEST(ExactSum, RoundsOnceToNearestEven) {
  // Multiples of 2^-40 whose exact sum an int64 holds: the reference is that integer converted once (which rounds
  // to nearest, ties to even), scaled by a power of two (exact).
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> k(-(int64_t{1} << 58), int64_t{1} << 58);
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t total = 0;
    ExactSum s;
    for (int i = 0; i < 4; ++i) {
      const int64_t v = (k(rng) >> (trial % 50)) / 64 * 64;  // at most 53 significant bits: exactly a double
      total += v;
      s.add(std::ldexp(static_cast<double>(v), -40));
    }
    ASSERT_EQ(bits(s.value()), bits(std::ldexp(static_cast<double>(total), -40))) << "trial " << trial;
  }
  // A tie: 2^53 + 1 lies halfway between 2^53 and 2^53 + 2, and rounds to the even one.
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{9007199254740992.0, 1.0}), 9007199254740992.0);
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{9007199254740994.0, 1.0}), 9007199254740996.0);
  // Just above the tie rounds up, however far below the extra is.
  EXPECT_EQ(mcmclb::exact_sum(std::vector<double>{9007199254740992.0, 1.0, 1e-300}), 9007199254740994.0);
}

TEST(ExactSum, AnyOrderAnySplitSameBits) {
  std::vector<double> xs = wild_doubles(5000, 11);
  const double reference = mcmclb::exact_sum(xs);
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(xs.begin(), xs.end(), rng);
    const std::size_t cut = rng() % xs.size();
    ExactSum a;
    ExactSum b;
    a.add(std::span<const double>(xs).first(cut));
    b.add(std::span<const double>(xs).subspan(cut));
    b += a;
    ASSERT_EQ(bits(b.value()), bits(reference)) << "trial " << trial;
  }
  // A plain loop of doubles does not keep its bits under reordering, which is why this type exists.
  double forward = 0;
  double backward = 0;
  for (const double x : xs) forward += x;
  for (auto it = xs.rbegin(); it != xs.rend(); ++it) backward += *it;
  EXPECT_NE(bits(forward), bits(backward)) << "the data should make plain summation order-dependent";
}

// ---- Typed collectives, per creation method ----

struct Stat {
  double sum;
  int64_t count;
  double max;
};

class GroupOps : public testing::TestWithParam<std::string> {
 protected:
  /// Every rank in a group: the whole world, or (split) the lower half and the upper half at once.
  std::unique_ptr<GroupComm> make(bool split) {
    creator_ = mcmclb::make_group_comm_creator(GetParam(), mpi::Comm::world());
    const int p = world_size();
    int first = 0;
    int last = p - 1;
    if (split && p > 1) {
      const int half = p / 2;
      first = world_rank() < half ? 0 : half;
      last = world_rank() < half ? half - 1 : p - 1;
    }
    return creator_->create_range(first, last, 9);
  }
  std::unique_ptr<mcmclb::GroupCommCreator> creator_;
};

void check_typed(GroupComm& g, bool buffered_self = false) {
  const int n = g.size();
  const int r = g.rank();
  // Reductions of doubles, ints and a struct.
  EXPECT_EQ(g.allreduce(static_cast<double>(r) + 0.5, ops::sum), n * n / 2.0);
  EXPECT_EQ(g.allreduce(static_cast<double>(r), ops::max), n - 1.0);
  EXPECT_EQ(g.allreduce(-r, ops::min), -(n - 1));
  std::vector<double> v = {1.0, static_cast<double>(r)};
  g.allreduce(v, ops::sum);
  EXPECT_EQ(v[0], n);
  EXPECT_EQ(v[1], n * (n - 1) / 2.0);
  EXPECT_EQ(g.allreduce(static_cast<double>(r + 1), [](double a, double b) { return a * b; }), std::tgamma(n + 1.0));
  const Stat mine{static_cast<double>(r), 1, static_cast<double>(2 * r)};
  const Stat all = g.allreduce(mine, [](Stat a, Stat b) {
    return Stat{a.sum + b.sum, a.count + b.count, std::max(a.max, b.max)};
  });
  EXPECT_EQ(all.count, n);
  EXPECT_EQ(all.sum, n * (n - 1) / 2.0);
  EXPECT_EQ(all.max, 2.0 * (n - 1));
  const int on_root = g.reduce(1, ops::sum, n - 1);
  if (r == n - 1) {
    EXPECT_EQ(on_root, n);
  }

  // Broadcasts: a vector takes root's size; a struct and an array keep theirs.
  std::vector<double> xs(r == n - 1 ? 5 : 1, r == n - 1 ? 2.5 : -1.0);
  g.bcast(xs, n - 1);
  EXPECT_EQ(xs, std::vector<double>(5, 2.5));
  Stat s = r == 0 ? Stat{1.5, 7, 3.0} : Stat{0, 0, 0};
  g.bcast(s, 0);
  EXPECT_EQ(s.count, 7);
  std::array<int, 3> a = {r, r, r};
  g.bcast(a, n - 1);
  EXPECT_EQ(a[2], n - 1);

  // Gathers: one value each, then r + 1 values each (sizes differ by member).
  EXPECT_EQ(g.allgather(r * 10), [&] {
    std::vector<int> e(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = i * 10;
    return e;
  }());
  std::vector<double> mine_v(static_cast<std::size_t>(r + 1), static_cast<double>(r));
  std::vector<int> counts;
  const std::vector<double> every = g.allgatherv(std::span<const double>(mine_v), &counts);
  ASSERT_EQ(every.size(), static_cast<std::size_t>(n * (n + 1) / 2));
  std::size_t at = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(counts[static_cast<std::size_t>(i)], i + 1);
    for (int k = 0; k <= i; ++k) EXPECT_EQ(every[at++], i);
  }
  // The documented call on a vector that is not const, whose std::span is of double, not const double; and the
  // vector itself.
  std::vector<double> mine_mutable = mine_v;
  EXPECT_EQ(group_all_gather(g, mine_mutable), every);
  EXPECT_EQ(g.allgatherv(mine_mutable), every);
  EXPECT_EQ(g.gatherv(std::span(mine_mutable), 0), r == 0 ? every : std::vector<double>{});
  const std::vector<Stat> at_root = g.gather(mine, 0);
  EXPECT_EQ(at_root.size(), r == 0 ? static_cast<std::size_t>(n) : 0U);
  for (std::size_t i = 0; i < at_root.size(); ++i) EXPECT_EQ(at_root[i].max, 2.0 * static_cast<double>(i));

  // A ring of messages, fixed size then a length the receiver learns by probing: member 0 sends first, the others
  // receive first, so no send waits on one that waits too (a send may block until it is received, as MPI_Send).
  // A group of one sends to itself, which only the queue of self_group() allows.
  if (n > 1 || buffered_self) {
    const int next = (r + 1) % n;
    const int previous = (r + n - 1) % n;
    std::vector<double> out(static_cast<std::size_t>(r + 2), 0.25 * r);  // not const: sent as a std::span<double>
    int64_t got = -1;
    std::vector<double> in;
    const auto receive = [&] {
      got = g.recv<int64_t>(previous, 3);
      in = g.recv_vector<double>(previous, 4);
    };
    if (r != 0) receive();
    g.send(static_cast<int64_t>(100 + r), next, 3);
    g.send(std::span(out), next, 4);
    if (r == 0) receive();
    EXPECT_EQ(got, 100 + previous);
    EXPECT_EQ(in, std::vector<double>(static_cast<std::size_t>(previous + 2), 0.25 * previous));
  }

  // The MPI communicator, in the group's rank order.
  const MPI_Comm comm = g.mpi_comm();
  int size = 0;
  int rank = -1;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  EXPECT_EQ(size, n);
  EXPECT_EQ(rank, r);
  int one = 1;
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  EXPECT_EQ(one, n);
  EXPECT_EQ(g.mpi_comm(), comm) << "made once, kept";

  // Nonblocking, untyped.
  double z = r;
  const auto pending = g.iallreduce(&z, 1, MPI_DOUBLE, MPI_SUM);
  mpi::wait_until_politely([&] { return pending->test(); });
  EXPECT_EQ(z, n * (n - 1) / 2.0);
}

/// Every member sums its share of the same doubles: the exact sum's bits do not depend on the group or its split.
void check_exact(GroupComm& g) {
  const std::vector<double> xs = wild_doubles(999, 5);
  const double reference = mcmclb::exact_sum(xs);
  ExactSum mine;
  for (std::size_t i = static_cast<std::size_t>(g.rank()); i < xs.size(); i += static_cast<std::size_t>(g.size())) {
    mine.add(xs[i]);
  }
  EXPECT_EQ(bits(g.allreduce(mine, ops::exact_sum).value()), bits(reference));
  // Element-wise on doubles: each member's one value per element.
  std::vector<double> v = {xs[static_cast<std::size_t>(g.rank())], 1e100, -static_cast<double>(g.rank())};
  g.allreduce(v, ops::exact_sum);
  EXPECT_EQ(bits(v[0]), bits(mcmclb::exact_sum(std::span<const double>(xs).first(static_cast<std::size_t>(g.size())))));
  EXPECT_EQ(v[1], 1e100 * g.size());
  EXPECT_EQ(v[2], -g.size() * (g.size() - 1) / 2.0);
}

TEST_P(GroupOps, TypedCollectivesOnTheWholeWorld) {
  auto g = make(false);
  ASSERT_NE(g, nullptr);
  check_typed(*g);
  check_exact(*g);
  g->free();
}

TEST_P(GroupOps, TypedCollectivesOnTwoHalvesAtOnce) {
  auto g = make(true);
  ASSERT_NE(g, nullptr);
  check_typed(*g);
  check_exact(*g);
  g->free();
}

std::vector<std::string> methods() {
  std::vector<std::string> m;
  for (auto name : mcmclb::group_comm_method_names()) {
    if (name != "from_group" || mcmclb::from_group_supported()) m.emplace_back(name);
  }
  return m;
}

INSTANTIATE_TEST_SUITE_P(Methods, GroupOps, testing::ValuesIn(methods()), [](const auto& info) { return info.param; });

TEST(SelfGroup, IsAGroupOfOneWithEveryCall) {
  auto g = mcmclb::self_group();
  check_typed(*g, true);
  check_exact(*g);
  EXPECT_THROW(g->send(1, 1, 0), mpi::UsageError) << "rank 1 is not in a group of one";
  EXPECT_THROW((void)g->recv<int>(0, 42), mpi::UsageError) << "nothing sent: an error, not a hang";
  g->free();
}

}  // namespace
