// SPDX-License-Identifier: BSD-3-Clause
// Group communicators of every creation method behind one interface, and the one factory that makes their
// creators (after RBC's Comm, which keeps MPI and range communicators behind one type). A method's communicator is
// an MPI communicator (the CommCreator methods of mcmclb/comm_create.hpp, wrapped here) or not (`range`:
// point-to-point collectives over a duplicate of the parent, mcmclb/range_comm.hpp). The walker kernel and
// mcmclb-commbench both create through make_group_comm_creator(). Not to be confused with mcmclb/group_comm.h,
// the C entry point to Algorithm 1.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/exact_sum.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// The reductions the typed collectives take by name (after MPL's and KaMPIng's operation objects): ops::sum,
/// ops::min and ops::max on MPI's own types, and ops::exact_sum, a sum of doubles whose bits do not depend on the
/// group's size or order (mcmclb/exact_sum.hpp). Any other reduction is a captureless callable T(T, T), which must
/// be associative and commutative (MPI_Op_create with commute = true), or an MPI_Op.
namespace ops {
struct sum_t {};
struct min_t {};
struct max_t {};
struct exact_sum_t {};
inline constexpr sum_t sum{};
inline constexpr min_t min{};
inline constexpr max_t max{};
inline constexpr exact_sum_t exact_sum{};
}  // namespace ops

namespace detail {

/// MPI's predefined datatype for T, or MPI_DATATYPE_NULL for a type MPI does not know (sent as bytes).
template <class T>
MPI_Datatype builtin_datatype() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<U, signed char>)
    return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<U, unsigned char>)
    return MPI_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<U, std::byte>)
    return MPI_BYTE;
  else if constexpr (std::is_same_v<U, short>)
    return MPI_SHORT;
  else if constexpr (std::is_same_v<U, unsigned short>)
    return MPI_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<U, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<U, unsigned>)
    return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<U, long>)
    return MPI_LONG;
  else if constexpr (std::is_same_v<U, unsigned long>)
    return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<U, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<U, unsigned long long>)
    return MPI_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<U, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>)
    return MPI_LONG_DOUBLE;
  else
    return MPI_DATATYPE_NULL;
}

template <class T>
inline constexpr bool is_builtin_v =
    std::is_arithmetic_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;

/// An MPI datatype for T: the predefined one, or T's bytes as one contiguous element (committed, freed with this).
/// Move-only, as every handle of mcmclb::mpi.
class Datatype {
 public:
  template <class T>
  static Datatype of() {
    static_assert(std::is_trivially_copyable_v<T>, "group collectives send trivially copyable types only");
    if constexpr (is_builtin_v<T> || std::is_same_v<std::remove_cv_t<T>, std::byte>) {
      return Datatype(builtin_datatype<T>(), false);
    } else {
      return contiguous_bytes(sizeof(T));
    }
  }
  ~Datatype();
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  Datatype(Datatype&& other) noexcept : type_(other.type_), owned_(std::exchange(other.owned_, false)) {}
  Datatype& operator=(Datatype&&) = delete;
  [[nodiscard]] MPI_Datatype get() const noexcept { return type_; }

 private:
  Datatype(MPI_Datatype type, bool owned) noexcept : type_(type), owned_(owned) {}
  static Datatype contiguous_bytes(std::size_t bytes);
  MPI_Datatype type_;
  bool owned_;
};

/// A user's reduction as an MPI operation (MPI_Op_create, commutative), freed with this.
class UserOp {
 public:
  UserOp(MPI_User_function* function);  // NOLINT: implicit on purpose
  ~UserOp();
  UserOp(const UserOp&) = delete;
  UserOp& operator=(const UserOp&) = delete;
  [[nodiscard]] MPI_Op get() const noexcept { return op_; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

/// MPI's call into a captureless callable F: inout[i] = f(in[i], inout[i]).
template <class T, class F>
void call_user_op(void* in, void* inout, int* length, MPI_Datatype* /*type*/) {
  static_assert(std::is_default_constructible_v<F>, "a reduction must be a captureless callable T(T, T) or an MPI_Op");
  const F f{};
  auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (int i = 0; i < *length; ++i) {
    T x;
    T y;
    std::memcpy(&x, a + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    std::memcpy(&y, b + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    const T z = f(x, y);
    std::memcpy(b + static_cast<std::size_t>(i) * sizeof(T), &z, sizeof(T));
  }
}

/// A container whose elements lie contiguously (std::vector, std::array, std::span, a C array): what std::span can
/// be made from. (Not std::ranges::contiguous_range: <ranges> costs every file that includes this header.)
template <class R>
concept contiguous_buffer = requires(R& r) {
  std::data(r);
  std::size(r);
};

/// The element type of such a container, without const: what a collective sends of it, whether the caller's
/// elements are const or not (a std::span<double> of a vector sends as a std::span<const double> does).
template <class R>
using element_t = std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<R&>()))>>;

/// The elements of such a container as a read-only span.
template <class R>
std::span<const element_t<R>> read_only(const R& r) {
  return {std::data(r), std::size(r)};
}

}  // namespace detail

/// A started nonblocking group operation. Destroying one still in flight is only for error paths.
class PendingOp {
 public:
  virtual ~PendingOp() = default;
  /// Progresses the operation; true once it is complete.
  virtual bool test() = 0;
};

/// The communicator over a group of ranks, whatever method made it: what a group's members need to work together.
/// Typed collectives over any trivially copyable type, as MPL and KaMPIng offer them (sizes and datatypes follow
/// from the arguments), point-to-point messages between members, and the MPI communicator itself for code that
/// wants one. Every member calls a collective, in the same order, as MPI requires. On real MPI the blocking forms
/// wait as the run's wait policy says (spinning, or napping so that waiting ranks leave their cores to working ones).
/// A sum of doubles has the same bits at any group size when each member adds its terms to an ExactSum, not to a
/// double (whose rounding depends on how the terms split), and the group reduces those:
/// <!-- compile: body(mcmclb::GroupComm& group, std::vector<double>& my_terms, std::vector<double>& my_samples,
///      std::vector<double>& params) -->
/// ```cpp
/// mcmclb::ExactSum mine;                                                // this member's terms, each added exactly
/// for (const double term : my_terms) mine += term;
/// double e = group.allreduce(mine, mcmclb::ops::exact_sum).value();     // the same bits at any group size
/// std::vector<double> xs = group.allgatherv(std::span(my_samples));     // every member's samples, in rank order
/// group.bcast(params, 0);                                               // a vector takes the root's size
/// ```
class GroupComm {
 public:
  virtual ~GroupComm() = default;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual int rank() const = 0;

  // ---- Typed collectives. A contiguous range (std::vector, std::array, std::span) is used in place, element by
  // element; a single value is returned. ----

  /// Every member gets op over the members' values, element by element.
  template <class T, class Op>
  requires(!detail::contiguous_buffer<T>) [[nodiscard]] T allreduce(const T& value, Op op) {
    T out = value;
    allreduce(std::span<T>(&out, 1), op);
    return out;
  }
  template <detail::contiguous_buffer R, class Op>
  void allreduce(R&& values, Op op) {
    reduce_span(std::span(values), op, -1);
  }
  /// As allreduce, but the result is only defined on root (the others keep their values or receive it too).
  template <class T, class Op>
  requires(!detail::contiguous_buffer<T>) [[nodiscard]] T reduce(const T& value, Op op, int root) {
    T out = value;
    reduce(std::span<T>(&out, 1), op, root);
    return out;
  }
  template <detail::contiguous_buffer R, class Op>
  void reduce(R&& values, Op op, int root) {
    reduce_span(std::span(values), op, root);
  }

  /// root's value on every member. A std::vector takes root's size (one more small broadcast); a fixed-size range
  /// (std::array, std::span) must have the same size on every member.
  template <class T>
  requires(!detail::contiguous_buffer<T>) void bcast(T& value, int root) { bcast(std::span<T>(&value, 1), root); }
  template <class T>
  void bcast(std::vector<T>& values, int root) {
    std::int64_t n = static_cast<std::int64_t>(values.size());
    bcast(&n, 1, MPI_INT64_T, root);
    values.resize(static_cast<std::size_t>(n));
    bcast(std::span<T>(values), root);
  }
  template <class T, std::size_t N>
  void bcast(std::span<T, N> values, int root) {
    const auto type = detail::Datatype::of<T>();
    bcast(values.data(), checked_count(values.size()), type.get(), root);
  }
  template <class T, std::size_t N>
  void bcast(std::array<T, N>& values, int root) {
    bcast(std::span<T, N>(values), root);
  }

  /// Every member's value, in rank order, on root (empty elsewhere).
  template <class T>
  [[nodiscard]] std::vector<T> gather(const T& value, int root) {
    return gatherv(std::span<const T>(&value, 1), root);
  }
  /// Every member's value, in rank order, on every member.
  template <class T>
  [[nodiscard]] std::vector<T> allgather(const T& value) {
    return allgatherv(std::span<const T>(&value, 1));
  }
  /// Every member's values, concatenated in rank order, on root (empty elsewhere); counts may differ by member.
  /// mine is any contiguous range (std::vector, std::array, std::span of const elements or not). counts, if given,
  /// receives each member's count on root.
  template <detail::contiguous_buffer R>
  [[nodiscard]] std::vector<detail::element_t<R>> gatherv(const R& mine, int root, std::vector<int>* counts = nullptr) {
    return collect(detail::read_only(mine), root, counts);
  }
  /// The same on every member.
  template <detail::contiguous_buffer R>
  [[nodiscard]] std::vector<detail::element_t<R>> allgatherv(const R& mine, std::vector<int>* counts = nullptr) {
    return collect(detail::read_only(mine), -1, counts);
  }

  // ---- Point to point between members (ranks of the group). Messages of the group's collectives never match
  // them. Every message sent within a group must be received before the group is freed. ----
  /// Sends a contiguous range (std::vector, std::array, std::span of const elements or not) or a single value, as
  /// MPI_Send does: it may block until the destination posts the matching recv (MPI buffers small messages, but
  /// need not, and large ones wait for the receiver), and it returns once the buffer may be reused. So two members
  /// that each send to the other before receiving may wait forever: let one receive first. A group of one
  /// (self_group) never blocks: it keeps the message until its recv.
  template <detail::contiguous_buffer R>
  void send(const R& values, int dest, int tag) {
    const auto type = detail::Datatype::of<detail::element_t<R>>();
    send(std::data(values), checked_count(std::size(values)), type.get(), dest, tag);
  }
  template <class T>
  requires(!detail::contiguous_buffer<T>) void send(const T& value, int dest, int tag) {
    send(std::span<const T>(&value, 1), dest, tag);
  }
  /// Receives into values, which must be at least as long as the message (receiving fewer is allowed).
  template <class T>
  void recv(std::span<T> values, int source, int tag) {
    const auto type = detail::Datatype::of<T>();
    recv(values.data(), checked_count(values.size()), type.get(), source, tag);
  }
  template <class T>
  requires(!detail::contiguous_buffer<T>) [[nodiscard]] T recv(int source, int tag) {
    T value;
    recv(std::span<T>(&value, 1), source, tag);
    return value;
  }
  /// Receives a message of any length (probed first).
  template <class T>
  [[nodiscard]] std::vector<T> recv_vector(int source, int tag) {
    const auto type = detail::Datatype::of<T>();
    std::vector<T> values(static_cast<std::size_t>(probe_count(source, tag, type.get())));
    recv(values.data(), static_cast<int>(values.size()), type.get(), source, tag);
    return values;
  }

  // ---- Untyped forms, as MPI's (what the typed ones call; every method implements them). ----
  /// Starts broadcasting count elements of type from root (data must stay alive until the operation completes).
  [[nodiscard]] virtual std::unique_ptr<PendingOp> ibcast(void* data, int count, MPI_Datatype type, int root) = 0;
  /// Starts reducing in place (every member gets the result; data must stay alive until it completes). op must be
  /// predefined or live until completion.
  [[nodiscard]] virtual std::unique_ptr<PendingOp> iallreduce(void* data, int count, MPI_Datatype type, MPI_Op op) = 0;
  /// Blocking forms; the defaults start the nonblocking one and wait politely.
  virtual void bcast(void* data, int count, MPI_Datatype type, int root);
  virtual void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op);
  /// Reduction onto root (default: allreduce, so every member gets the result).
  virtual void reduce(void* data, int count, MPI_Datatype type, MPI_Op op, int root);
  /// MPI_Gatherv's meaning: root receives counts[r] elements of member r at displacements[r] (elements) of all.
  virtual void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                       MPI_Datatype type, int root) = 0;
  /// The same on every member (default: gatherv to member 0, then a broadcast of the whole).
  virtual void allgatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                          MPI_Datatype type);
  virtual void send(const void* data, int count, MPI_Datatype type, int dest, int tag) = 0;
  virtual void recv(void* data, int count, MPI_Datatype type, int source, int tag) = 0;
  /// Elements of type in the next message from source with tag, once it has arrived (MPI_Probe + MPI_Get_count).
  [[nodiscard]] virtual int probe_count(int source, int tag, MPI_Datatype type) = 0;
  /// An MPI communicator over the group, in the group's rank order, for code that needs MPI itself. Methods that
  /// make one hand it out (no cost); `range` makes one on the first call (MPI_Comm_create_group: collective over
  /// the group, and as dear as that method's creation), kept until free(). Owned by this group: do not free it.
  [[nodiscard]] virtual MPI_Comm mpi_comm() = 0;

  // ---- The kernel's word-level calls, kept for compatibility. ----
  /// Starts broadcasting words from root (words must stay alive until the operation completes).
  [[nodiscard]] virtual std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) = 0;
  /// Broadcasts words from root, waiting politely (nap: the pause between tests). The default starts ibcast() and
  /// waits for it; an MPI communicator overrides it with mpi::bcast_politely (blocking in simulation).
  virtual void bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap = mpi::default_nap);
  virtual void barrier() = 0;
  /// Sums values over the group, in place.
  virtual void allreduce_sum(std::span<int64_t> values) = 0;
  /// Starts summing values over the group, in place (values must stay alive until the operation completes). The
  /// default completes at once through allreduce_sum(); a method with a nonblocking reduction overrides it, so
  /// callers in lockstep (compute mode's energy sums) can wait with a shorter nap than allreduce_sum's.
  [[nodiscard]] virtual std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values);
  /// Frees the communicator (collective over the group). Freeing again does nothing.
  virtual void free() = 0;

 private:
  static int checked_count(std::size_t n);

  template <class T, std::size_t N, class Op>
  void reduce_span(std::span<T, N> values, Op op, int root) {
    using U = std::remove_cv_t<T>;
    const int count = checked_count(values.size());
    const auto run = [&](void* data, int n, MPI_Datatype type, MPI_Op mpi_op) {
      if (root < 0) {
        allreduce(data, n, type, mpi_op);
      } else {
        reduce(data, n, type, mpi_op, root);
      }
    };
    if constexpr (std::is_same_v<Op, ops::exact_sum_t>) {
      static_assert(std::is_same_v<U, double> || std::is_same_v<U, ExactSum>,
                    "ops::exact_sum sums doubles or ExactSums");
      std::vector<ExactSum> sums(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        if constexpr (std::is_same_v<U, double>) {
          sums[i].add(values[i]);
        } else {
          sums[i] = values[i];
        }
        sums[i].normalize();
      }
      run(sums.data(), checked_count(sums.size() * (sizeof(ExactSum) / sizeof(std::int64_t))), MPI_INT64_T, MPI_SUM);
      for (std::size_t i = 0; i < values.size(); ++i) {
        sums[i].normalize();
        if constexpr (std::is_same_v<U, double>) {
          values[i] = sums[i].value();
        } else {
          values[i] = sums[i];
        }
      }
    } else if constexpr (std::is_same_v<Op, MPI_Op>) {
      const auto type = detail::Datatype::of<U>();
      run(values.data(), count, type.get(), op);
    } else if constexpr (std::is_same_v<Op, ops::sum_t> || std::is_same_v<Op, ops::min_t> ||
                         std::is_same_v<Op, ops::max_t>) {
      static_assert(detail::is_builtin_v<U>,
                    "ops::sum, ops::min and ops::max reduce MPI's own types; pass a callable for other types");
      const MPI_Op mpi_op = std::is_same_v<Op, ops::sum_t>   ? MPI_SUM
                            : std::is_same_v<Op, ops::min_t> ? MPI_MIN
                                                             : MPI_MAX;
      run(values.data(), count, detail::builtin_datatype<U>(), mpi_op);
    } else {
      static_assert(std::is_invocable_r_v<U, Op, U, U>,
                    "a reduction is ops::sum, min, max, exact_sum, an MPI_Op or "
                    "a captureless callable T(T, T)");
      const auto type = detail::Datatype::of<U>();
      const detail::UserOp user(&detail::call_user_op<U, Op>);
      run(values.data(), count, type.get(), user.get());
    }
  }

  template <class T>
  std::vector<T> collect(std::span<const T> mine, int root, std::vector<int>* counts_out) {
    const auto type = detail::Datatype::of<T>();
    const int count = checked_count(mine.size());
    const auto n = static_cast<std::size_t>(size());
    std::vector<int> counts(n);
    std::vector<int> ones(n, 1);
    std::vector<int> slots(n);
    for (std::size_t r = 0; r < n; ++r) slots[r] = static_cast<int>(r);
    // Every member learns the counts (an all-gather of one int each), so the displacements agree everywhere.
    allgatherv(&count, 1, counts.data(), ones.data(), slots.data(), MPI_INT);
    std::vector<int> displacements(counts.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displacements[r] = checked_count(total);
      total += static_cast<std::size_t>(counts[r]);
    }
    const bool gets = root < 0 || rank() == root;
    std::vector<T> all(gets ? total : 0);
    if (root < 0) {
      allgatherv(mine.data(), count, all.data(), counts.data(), displacements.data(), type.get());
    } else {
      gatherv(mine.data(), count, all.data(), counts.data(), displacements.data(), type.get(), root);
    }
    if (counts_out != nullptr) *counts_out = gets ? counts : std::vector<int>{};
    return all;
  }
};

/// A group of this rank alone (over a duplicate of MPI_COMM_SELF), for a chain worked outside any balancer: the
/// hand-written reference loop a user compares mcmclb's answers with, or a unit test of a chain's work().
std::unique_ptr<GroupComm> self_group();

/// Creates group communicators by one method, over groups of the parent's ranks.
class GroupCommCreator {
 public:
  virtual ~GroupCommCreator() = default;
  GroupCommCreator(const GroupCommCreator&) = delete;
  GroupCommCreator& operator=(const GroupCommCreator&) = delete;

  [[nodiscard]] const MethodInfo& info() const noexcept { return info_; }
  [[nodiscard]] std::string_view name() const noexcept { return info_.name; }
  /// True when only the group's members take part in create().
  [[nodiscard]] bool group_collective() const noexcept { return info_.group_collective; }
  /// The communicator over members (ranks of the parent, in order); null for callers outside members.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create(const mpi::Group& members, int tag) = 0;
  /// The communicator over the contiguous parent ranks [first, last], called by those ranks (and, for a
  /// parent-collective method, by every other parent rank through create() with an empty group). The kernel's
  /// groups are always such ranges, so a method that can create from the bounds alone (contiguous_only; range:
  /// O(1), no message) skips building an MPI group; the others build the group here.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create_range(int first, int last, int tag) = 0;

 protected:
  explicit GroupCommCreator(const MethodInfo& info) : info_(info) {}

 private:
  MethodInfo info_;
};

/// The names of every creation method (creation_methods()), in table order.
std::vector<std::string_view> group_comm_method_names();

/// Collective over parent: the creator for method name, whichever kind of communicator it makes. Unknown name:
/// mpi::UsageError listing the known ones; a method this library does not support: mpi::UsageError saying so.
std::unique_ptr<GroupCommCreator> make_group_comm_creator(std::string_view method, const mpi::Comm& parent);

}  // namespace mcmclb
