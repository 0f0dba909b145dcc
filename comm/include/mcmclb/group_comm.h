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
 * MPI call); never throws. Callers not in group get MPI_COMM_NULL without communicating. */
int mcmclb_group_comm_create(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);

#ifdef __cplusplus
}
#endif

#endif /* MCMCLB_GROUP_COMM_H */
