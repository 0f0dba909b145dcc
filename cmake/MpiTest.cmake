# mcmclb_add_mpi_test(NAME <name> TARGET <exe> RANKS <n>... [TIMEOUT <s>] [ARGS <arg>...])
# Registers <name>.<n>ranks for every rank count, run under the real mpiexec. Every MPI test gets a timeout
# because MPI bugs hang rather than fail; tests run one at a time (RESOURCE_LOCK) since ranks oversubscribe
# the cores and two MPI jobs at once would slow each other by orders of magnitude.
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
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} RESOURCE_LOCK mpi PROCESSORS ${n}
                         LABELS "mpi")
  endforeach()
endfunction()
