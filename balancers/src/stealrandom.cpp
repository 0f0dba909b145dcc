// SPDX-License-Identifier: BSD-3-Clause
// Balancer `stealrandom`: `steal` whose thieves pick their victims uniformly at random, the standard work-stealing
// baseline (randomized work stealing), where `steal` walks the ring of groups to the right. Everything else is
// steal's protocol (balancers/src/steal.cpp): the same ASK, CHAIN and NONE messages, the same end.
//
// What changes in the termination argument: a thief keeps the set of groups it knows to have nothing to give (the
// victims that answered NONE, and the groups strictly between a victim and the hint it answered with, which its
// hint claims; NONE is a permanent fact), draws each victim from the others, and is done for good once it knows
// them all. Each NONE grows that set by at least the victim, so a thief is done after at most U - 1 NONE answers
// in a row; each CHAIN removes an unstarted chain. A random thief answers NONE with the first group to its right
// that it does not know to be empty: every group it skips has answered NONE to it, directly or through a hint, so
// steal's hint claim holds for it too, and an asker learns a whole run of empty groups from one answer. (With the
// trivial hint, its right neighbour, each NONE taught one group, and at the end every thief asked every other: U^2
// asks, which made 8192 groups cost hours of simulation.) The draws come from splitmix64 seeded by the run's
// work.seed and the group: a run is repeatable, and a simulated one deterministic.
#include "mcmclb/balancer.hpp"
#include "steal.hpp"

namespace mcmclb {

BalancerEntry stealrandom_balancer() { return steal::steal_entry("stealrandom", steal::Victims::random); }

}  // namespace mcmclb
