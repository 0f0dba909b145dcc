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
 * Returns MPI_SUCCESS or an MPI error class (MPI_ERR_TAG, MPI_ERR_GROUP, MPI_ERR_ARG, or the class of a failed
 * MPI call); never throws. Callers not in group get MPI_COMM_NULL without communicating.
 *
 * Thread safety: NOT safe to call concurrently from several threads of one process with MPICH 4.0.x, even
 * with distinct tags and with MPI_THREAD_MULTIPLE. Calls from different processes are independent, and calls
 * from one thread at a time (or serialised by the caller, e.g. under a mutex around every call) are fine.
 * The paper assumes that distinct tags are enough, as they are for MPI_Comm_create_group; with this library
 * they are not, for two reasons inside MPICH 4.0.2, not in this code:
 *   - MPI_Intercomm_create's leaders exchange their group maps with a fixed internal tag instead of the
 *     caller's, so two concurrent exchanges between the same leaders can match each other's messages
 *     ("Message truncated" in MPID_Intercomm_exchange_map). Fixed upstream in MPICH 5.0.
 *   - MPI_Intercomm_merge derives a temporary context id that is not unique across threads (an assertion in
 *     contextid.c, or a crash inside the network layer).
 * tests/threads/intercomm_threads.c shows it at 2-4 processes x 2-8 threads: "Message truncated" errors,
 * segfaults inside PMPI_Intercomm_create, or a hang; one thread per process passes. The function's own setup
 * (a private copy of MPI_COMM_SELF made with MPI_Comm_create_group and the caller's tag) is safe to run
 * concurrently. Threads that must create communicators concurrently should use MPI_Comm_create_group, which
 * the same program runs correctly on the same MPICH. */
int mcmclb_group_comm_create(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm);

#ifdef __cplusplus
}
#endif

#endif /* MCMCLB_GROUP_COMM_H */
