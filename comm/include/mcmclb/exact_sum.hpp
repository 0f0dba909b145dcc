// SPDX-License-Identifier: BSD-3-Clause
// An exact sum of doubles, so that a chain's answer does not depend on how many ranks summed it or in what order.
// Floating-point addition is not associative: a group of 2 ranks that sums its halves and then the two partial sums
// rounds differently from one rank summing all terms. ExactSum instead keeps the sum as a long fixed-point number
// that covers every double's bits (Kulisch's long accumulator), so adding is exact and the order never matters; the
// only rounding is the one at value(), which depends on the exact sum alone. Summing ExactSums over a group is an
// element-wise sum of 64-bit integers, which any MPI reduction does exactly (GroupComm::allreduce).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace mcmclb {

/// The exact sum of the doubles added to it. Trivially copyable (an array of integers), so it can be sent and
/// reduced as it is; 568 bytes (71 words). Adding is exact for up to 2^31 terms between normalisations (done by
/// itself). value() is the exact sum rounded to nearest, ties to even (a sum below 2^-1022 in magnitude may be off by
/// one unit in its last place: it is rounded twice). Infinities and NaNs follow IEEE rules: inf + -inf is NaN.
class ExactSum {
 public:
  /// 32 bits of the fixed-point number per limb, from 2^-1074 (the smallest subnormal) up, with room above 2^1024.
  static constexpr int kLimbs = 67;

  ExactSum() = default;
  explicit ExactSum(double x) { add(x); }

  /// Adds x exactly.
  void add(double x) noexcept;
  /// Adds every value of xs exactly.
  void add(std::span<const double> xs) noexcept {
    for (const double x : xs) add(x);
  }
  ExactSum& operator+=(double x) noexcept {
    add(x);
    return *this;
  }
  /// Adds another exact sum, exactly (what a reduction over a group does limb by limb).
  ExactSum& operator+=(const ExactSum& other) noexcept;

  /// The sum, rounded once to the nearest double. The same bits for the same exact sum, however it was made.
  [[nodiscard]] double value() const noexcept;

  /// Carries every limb's excess into the next, so each holds 0 .. 2^32 - 1 (the top one keeps the sign). Done by
  /// add() when needed and before a reduction; value() works on a normalised copy.
  void normalize() noexcept;

 private:
  // words_[0 .. kLimbs - 1]: the limbs; then the counts of NaNs, +inf and -inf added; then the terms added since the
  // last normalisation (0 once normalised, so that a reduction of normalised sums adds zeros there).
  static constexpr int kNan = kLimbs, kPosInf = kLimbs + 1, kNegInf = kLimbs + 2, kPending = kLimbs + 3;
  std::array<std::int64_t, kLimbs + 4> words_{};
};

/// The exact sum of xs, rounded once: the same bits for any order of xs.
[[nodiscard]] inline double exact_sum(std::span<const double> xs) noexcept {
  ExactSum s;
  s.add(xs);
  return s.value();
}

}  // namespace mcmclb
