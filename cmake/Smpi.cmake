# SPDX-License-Identifier: BSD-3-Clause
# The simulation build's MPI: smpicc/smpicxx compile and link every MPI program themselves (headers from
# /usr/include/smpi, -lsimgrid, and -shared: smpirun loads the "executable" as a library), so MPI::MPI_C and
# MPI::MPI_CXX are empty stand-ins and FindMPI is not used. Included by the top-level CMakeLists.txt.
get_filename_component(mcmclb_cxx_name ${CMAKE_CXX_COMPILER} NAME)
if(NOT mcmclb_cxx_name MATCHES "^smpic")
  message(FATAL_ERROR "MCMCLB_SMPI=ON needs the SimGrid compilers (CMAKE_C_COMPILER=smpicc, "
                      "CMAKE_CXX_COMPILER=smpicxx), got ${CMAKE_CXX_COMPILER}; use a fresh build folder")
endif()
mcmclb_dependency(SimGrid OUT MCMCLB_SMPIRUN)
execute_process(COMMAND ${MCMCLB_SMPIRUN} --version OUTPUT_VARIABLE MCMCLB_SIMGRID_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE)
message(STATUS "MCMCLB_SMPI: ${MCMCLB_SIMGRID_VERSION}, smpirun at ${MCMCLB_SMPIRUN}")

foreach(lang C CXX)
  add_library(MPI::MPI_${lang} INTERFACE IMPORTED)
endforeach()
# SMPI_NO_OVERRIDE_MALLOC: keep malloc/free real (smpi_helpers.h would otherwise #define free(x), which renames
# every method called free()); shared-malloc is for folding big application buffers, which mcmclb has none of.
target_compile_definitions(MPI::MPI_CXX INTERFACE SMPI_NO_OVERRIDE_MALLOC=1)
target_compile_definitions(MPI::MPI_C INTERFACE SMPI_NO_OVERRIDE_MALLOC=1)
set(MPIEXEC_EXECUTABLE ${MCMCLB_SMPIRUN})
