// SPDX-License-Identifier: BSD-3-Clause
// ExactSum (mcmclb/exact_sum.hpp): a double's 53-bit significand lands in the three 32-bit limbs its exponent
// points at; carries are propagated only now and then, since each limb is a 64-bit integer with 32 bits to spare.
#include "mcmclb/exact_sum.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace mcmclb {

namespace {

__extension__ typedef unsigned __int128 Wide;  // GCC's and Clang's 128-bit integer (-Wpedantic: an extension)

// Terms a limb can take between normalisations: each adds less than 2^32 in magnitude, and 2^30 of them stay far
// below 2^63 even on top of a normalised limb.
constexpr std::int64_t kNormalizeEvery = std::int64_t{1} << 30;

}  // namespace

void ExactSum::add(double x) noexcept {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const auto biased = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  const bool negative = (bits >> 63) != 0;
  if (biased == 0x7ff) {  // infinity or NaN: counted apart, as no fixed-point number holds them
    ++words_[fraction != 0 ? kNan : negative ? kNegInf : kPosInf];
    return;
  }
  if (biased == 0 && fraction == 0) return;  // a zero adds nothing
  // x = significand * 2^(position - 1074): subnormals have exponent field 0 and no hidden bit.
  const std::uint64_t significand = biased == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
  const int position = biased == 0 ? 0 : biased - 1;
  const int limb = position / 32;
  const Wide wide = static_cast<Wide>(significand) << (position % 32);
  const std::int64_t sign = negative ? -1 : 1;
  words_[limb] += sign * static_cast<std::int64_t>(static_cast<std::uint32_t>(wide));
  words_[limb + 1] += sign * static_cast<std::int64_t>(static_cast<std::uint32_t>(wide >> 32));
  words_[limb + 2] += sign * static_cast<std::int64_t>(static_cast<std::uint64_t>(wide >> 64));
  if (++words_[kPending] >= kNormalizeEvery) normalize();
}

ExactSum& ExactSum::operator+=(const ExactSum& other) noexcept {
  ExactSum addend = other;
  addend.normalize();
  normalize();
  for (int i = 0; i < kPending; ++i) words_[i] += addend.words_[i];
  words_[kPending] = 2;  // two normalised limbs' worth per limb, which a later normalisation carries
  return *this;
}

void ExactSum::normalize() noexcept {
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const std::int64_t carry = words_[i] >> 32;  // floor division by 2^32, for negative limbs too
    words_[i] -= carry * (std::int64_t{1} << 32);
    words_[i + 1] += carry;
  }
  words_[kPending] = 0;
}

double ExactSum::value() const noexcept {
  if (words_[kNan] > 0 || (words_[kPosInf] > 0 && words_[kNegInf] > 0)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (words_[kPosInf] > 0) return std::numeric_limits<double>::infinity();
  if (words_[kNegInf] > 0) return -std::numeric_limits<double>::infinity();
  ExactSum s = *this;
  s.normalize();
  // Normalised, every limb but the top one is 0 .. 2^32 - 1, so the top limb's sign is the sum's.
  const bool negative = s.words_[kLimbs - 1] < 0;
  if (negative) {
    for (int i = 0; i < kLimbs; ++i) s.words_[i] = -s.words_[i];
    s.normalize();
  }
  int top = kLimbs - 1;
  while (top >= 0 && s.words_[top] == 0) --top;
  if (top < 0) return 0.0;
  // Only the top limb can reach 2^32, at sums beyond 2^1038: far past the largest double.
  if (s.words_[top] >> 32 != 0)
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const auto limb = [&](int i) -> Wide {
    return i < 0 ? 0 : static_cast<Wide>(static_cast<std::uint64_t>(s.words_[i]));
  };
  // The top three limbs, shifted so that the highest set bit is bit 127: its upper 64 bits keep the 53 the double
  // keeps plus 11 below; any bit lower still only decides a tie, so it is folded into the lowest bit (sticky).
  const Wide top_three = (limb(top) << 64) | (limb(top - 1) << 32) | limb(top - 2);
  const int lead = std::countl_zero(static_cast<std::uint64_t>(s.words_[top]));  // 32 .. 63: the top limb < 2^32
  const Wide shifted = top_three << lead;
  auto significand = static_cast<std::uint64_t>(shifted >> 64);
  bool sticky = static_cast<std::uint64_t>(shifted) != 0;
  for (int i = top - 3; i >= 0 && !sticky; --i) sticky = s.words_[i] != 0;
  if (sticky) significand |= 1;
  const double magnitude = std::ldexp(static_cast<double>(significand), 64 + 32 * (top - 2) - 1074 - lead);
  return negative ? -magnitude : magnitude;
}

}  // namespace mcmclb
