// SPDX-License-Identifier: BSD-3-Clause
/* Group-collective communicator creation (Algorithm 1 of Dinan et al., EuroMPI 2011) behind the paper's
 * proposed C signature, for plain MPI programs written in C or C++. Link with the library mcmclb_comm. */
#ifndef MCMCLB_GROUP_COMM_H
#define MCMCLB_GROUP_COMM_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a communicator over group, with ranks in the group's order, collectively over the group's members
 * only. comm must contain every member of group; group must be identical on all members. The members'
 * leaders exchange point-to-point messages on comm with tag (0 <= tag <= MPI_TAG_UB): as in the paper, the
 * caller supplies a tag that no other operation on comm uses concurrently.
 *
 * The tag must be the same on every member, as for MPI_Comm_create_group. It is not checked: checking would need
 * a message on comm that matches whatever the tag, which is what the tag exists to prevent, or an extra round
 * of communication in every creation. Members that pass different tags make the call erroneous: in the
 * rounds where leaders with different tags meet, their handshakes never match and those members hang (the
 * others wait for them); where only non-leaders differ, the call may succeed. Neither outcome is guaranteed.
 *
 * MPI must be usable: called before MPI_Init / MPI_Init_thread or after MPI_Finalize (MPI_Initialized false or
 * MPI_Finalized true), the call makes no other MPI call and returns MPI_ERR_OTHER with *newcomm set to
 * MPI_COMM_NULL, instead of the abort that an MPI call at that time would cause.
 *
 * Returns MPI_SUCCESS or an MPI error class, never throws, and leaves *newcomm MPI_COMM_NULL on every error:
 *   MPI_ERR_ARG    newcomm is NULL (checked first; nothing is written);
 *   MPI_ERR_OTHER  MPI is not initialised, or already finalised (above);
 *   MPI_ERR_COMM   comm is MPI_COMM_NULL;
 *   MPI_ERR_GROUP  group is MPI_GROUP_NULL, or has a member that is not in comm;
 *   MPI_ERR_TAG    tag is negative or above MPI_TAG_UB;
 *   otherwise the class of a failed MPI call, returned only where the communicators it ran on (comm and
 *   MPI_COMM_SELF) have an error handler that returns, such as MPI_ERRORS_RETURN; the default aborts.
 * The argument errors are found locally, before any communication, so they are returned on every member that
 * passes the same arguments. Callers not in group get MPI_COMM_NULL without communicating.
 *
 * Thread safety: NOT safe to call concurrently from several threads of one process, with MPICH 4.0.x or with Open
 * MPI 4.1.x, even with distinct tags and with MPI_THREAD_MULTIPLE. The paper assumes that distinct tags are enough,
 * as they are for MPI_Comm_create_group; with these libraries they are not, for reasons inside their
 * MPI_Intercomm_create and MPI_Intercomm_merge, not in this code:
 *   MPICH 4.0.x (seen with 4.0.2): "Message truncated" errors, segfaults inside PMPI_Intercomm_create, or a hang.
 *   - MPI_Intercomm_create's leaders exchange their group maps with a fixed internal tag instead of the
 *     caller's, so two concurrent exchanges between the same leaders can match each other's messages
 *     ("Message truncated" in MPID_Intercomm_exchange_map). Fixed upstream in MPICH 5.0.
 *   - MPI_Intercomm_merge derives a temporary context id that is not unique across threads (an assertion in
 *     contextid.c, or a crash inside the network layer).
 *   Open MPI 4.1.x (seen with 4.1.4): a hang, without an error. Both causes are in how MPI_Intercomm_create
 *   agrees on the new communicator's context id, and the same code is still in Open MPI 5.0:
 *   - the two leaders exchange their proposals, and the closing barrier, over comm with one fixed internal tag
 *     instead of the caller's, so concurrent creations between the same two leaders take each other's messages:
 *     the two sides can settle on different ids, after which the communicator's messages never match (a hang in
 *     the merge), or one side finishes while the other waits for the messages already taken.
 *   - while one creation picks its id, a process holds back the concurrent creations ranked after it, ranked by
 *     the id of the communicator each is made from. For MPI_Comm_create_group that is its parent, the same on
 *     every member; for MPI_Intercomm_create it is each side's own local communicator, whose id differs between
 *     the two groups, so two creations can be ranked in opposite orders on two processes, and each process then
 *     waits for a creation that the other holds back. Giving each thread its own duplicate of comm removes the
 *     first cause, not this one: it still hangs.
 * One thread per process passes with both libraries, and calls from different processes are independent. Calls
 * from several threads serialised by the caller are fine only if the processes make the calls they share in the
 * same order, the rule for every blocking group-collective call: a mutex around every call is NOT enough, since
 * two processes whose threads take it in different orders each wait inside a call for the other. The function's
 * own setup (a private copy of MPI_COMM_SELF made with MPI_Comm_create_group and the caller's tag) is safe to run
 * concurrently. Threads that must create communicators concurrently should use MPI_Comm_create_group, which the
 * same program runs correctly with both libraries (tests/threads/intercomm_threads.c shows all of this). */
int mcmclb_group_comm_create(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm);

#ifdef __cplusplus
}
#endif

#endif /* MCMCLB_GROUP_COMM_H */
