# SPDX-License-Identifier: BSD-3-Clause
# mcmclb_add_mpi_test(NAME <name> TARGET <exe> RANKS <n>... [TIMEOUT <s>] [ARGS <arg>...])
# Registers <name>.<n>ranks for every rank count, run under the real mpiexec. Every MPI test gets a timeout
# because MPI bugs hang rather than fail. They run one at a time, since ranks oversubscribe the cores and two MPI
# jobs at once would slow each other by orders of magnitude: the lock table at the end of tests/CMakeLists.txt.
function(mcmclb_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "RANKS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  # The library's launcher flags from cmake/Mpi.cmake's table: beyond the cores its oversubscription flags, and
  # its environment (Open MPI's permission to run as root, which CI is).
  cmake_host_system_information(RESULT cpus QUERY NUMBER_OF_LOGICAL_CORES)
  foreach(n IN LISTS T_RANKS)
    set(test_name ${T_NAME}.${n}ranks)
    set(flags "")
    if(n GREATER cpus)
      set(flags ${MCMCLB_MPI_OVERSUB_FLAGS})
    endif()
    add_test(NAME ${test_name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${flags} ${MPIEXEC_NUMPROC_FLAG} ${n} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${n}
                         LABELS "mpi")
    if(MCMCLB_MPI_TEST_ENV)
      set_tests_properties(${test_name} PROPERTIES ENVIRONMENT "${MCMCLB_MPI_TEST_ENV}")
    endif()
  endforeach()
endfunction()
