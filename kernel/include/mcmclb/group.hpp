// The kernel reaches its group's communicator through GroupComm, which lives in the communicator library
// (mcmclb/group_comm.hpp); this name is kept for the kernel's and the balancers' existing includes.
#pragma once

#include "mcmclb/group_comm.hpp"
