# How the tests share the cores. The README's test command runs `ctest -j2` (two slots, one per core of the
# machine it is sized for) and a test takes as many slots as it names in PROCESSORS, at most all of them:
#  - a test that starts MPI ranks takes one slot per rank and the lock `mpi`: from 2 ranks on it runs alone, since
#    MPICH's ranks busy-poll and anything beside them on the cores (another MPI job above all) slows them by
#    orders of magnitude and moves the timing the kernel tests assert on;
#  - every other test (one process, a build, the Slurm test's daemons, which mostly wait) takes one slot and no
#    lock, so two of them share the cores, and one runs beside a one-rank MPI test.

# mcmclb_mpi_test_properties(<test> RANKS <n>): <test> starts MPI jobs of at most <n> ranks, itself or through a
# script: the lock `mpi` and <n> slots.
function(mcmclb_mpi_test_properties test)
  cmake_parse_arguments(T "" "RANKS" "" ${ARGN})
  set_tests_properties(${test} PROPERTIES RESOURCE_LOCK mpi PROCESSORS ${T_RANKS})
endfunction()

# mcmclb_add_mpi_test(NAME <name> TARGET <exe> RANKS <n>... [TIMEOUT <s>] [ARGS <arg>...])
# Registers <name>.<n>ranks for every rank count, run under the real mpiexec. Every MPI test gets a timeout
# because MPI bugs hang rather than fail.
function(mcmclb_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "RANKS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(n IN LISTS T_RANKS)
    set(test_name ${T_NAME}.${n}ranks)
    add_test(NAME ${test_name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "mpi")
    mcmclb_mpi_test_properties(${test_name} RANKS ${n})
  endforeach()
endfunction()
