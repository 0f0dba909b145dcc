# The MPI library the build uses, chosen by name (MCMCLB_MPI), and everything that differs between the libraries we
# support, in one table: their compiler wrappers and launcher, what their mpiexec needs, and the srun plugin of
# their batch scripts. The binaries get the row they were built with (generated mcmclb/mpi_build.hpp), the MPI
# tests get its mpiexec flags (cmake/MpiTest.cmake) and the Slurm scripts its srun plugin, so a build never mixes
# one library's programs with another's launcher.
#
# Why by name: Debian's alternatives point `mpicc` and `mpiexec` at whichever MPI has the higher priority (Open MPI
# 50, MPICH 40), so installing a second MPI would silently switch a build that trusted `mpicc`. Each library's own
# wrappers (mpicc.mpich, mpicc.openmpi) and launchers do not move.
#
# Columns, per library:
#   _SUFFIX        the suffix of its wrappers and launcher (mpicc.<suffix>, mpicxx.<suffix>, mpiexec.<suffix>)
#   _MACRO         a macro only its mpi.h defines: the check that the wrappers found really are that library
#   _ROOT_FLAGS    what its mpiexec needs to start as root (Open MPI refuses root without them; MPICH does not)
#   _OVERSUB_FLAGS what its mpiexec needs when ranks outnumber the cores (Open MPI refuses more ranks than slots,
#                  and would bind every rank to a core of its own; unbound, the ranks share the cores; MPICH's
#                  Hydra starts any number and binds nothing unless asked)
#   _SRUN_MPI      the srun --mpi plugin its ranks talk to under Slurm (Debian's slurm-wlm has pmi2 and pmix;
#                  Debian's Open MPI is built against PMIx, MPICH's Hydra-less ranks speak PMI-2)
#   _DEFINES       compile definitions for every user of its mpi.h (Open MPI: OMPI_SKIP_MPICXX, since we call the C
#                  API only and the headers of its deprecated C++ bindings warn under -Wextra, fatal with -Werror)
#   _TEST_ENV      environment for the tests under its mpiexec (Open MPI: the documented pair that allows root,
#                  for the tests that call mpiexec themselves; and odls_base_sigkill_timeout 0: when a rank exits
#                  non-zero, as every refusal of bad input does, Open MPI 4.1's mpiexec waits that many seconds
#                  twice before it kills the job's other processes, 2 s by default even when none is left,
#                  which made each refusal a test checks take 2.5 s against 0.4 s)
#   _WAITING       how it waits where ranks outnumber cores, and what that costs, for the sweep's note on
#                  oversubscribed points (measured on a 2-core VM: docs/guide/commbench.md, P = 8 against P = 2)
set(MCMCLB_MPI_LIBRARIES MPICH OpenMPI)
set(MCMCLB_MPI_MPICH_SUFFIX mpich)
set(MCMCLB_MPI_MPICH_MACRO MPICH_VERSION)
set(MCMCLB_MPI_MPICH_ROOT_FLAGS "")
set(MCMCLB_MPI_MPICH_OVERSUB_FLAGS "")
set(MCMCLB_MPI_MPICH_SRUN_MPI pmi2)
set(MCMCLB_MPI_MPICH_TEST_ENV "")
set(MCMCLB_MPI_MPICH_DEFINES "")
set(MCMCLB_MPI_MPICH_WAITING "MPICH busy-polls while it waits, so communicator creation costs 100-1000x more")
set(MCMCLB_MPI_OpenMPI_SUFFIX openmpi)
set(MCMCLB_MPI_OpenMPI_MACRO OPEN_MPI)
set(MCMCLB_MPI_OpenMPI_ROOT_FLAGS --allow-run-as-root)
set(MCMCLB_MPI_OpenMPI_OVERSUB_FLAGS --oversubscribe --bind-to none)
set(MCMCLB_MPI_OpenMPI_SRUN_MPI pmix)
set(MCMCLB_MPI_OpenMPI_DEFINES OMPI_SKIP_MPICXX=1)
set(MCMCLB_MPI_OpenMPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_odls_base_sigkill_timeout=0")
set(MCMCLB_MPI_OpenMPI_WAITING
    "Open MPI yields the core while it waits there, yet communicator creation still costs some 20x more")

if(MCMCLB_SMPI)
  # The simulation build's MPI is SimGrid's (cmake/Smpi.cmake), launched by smpirun through --launcher smpi; its
  # binaries carry no mpiexec.
  set(MCMCLB_MPI_LIBRARY SMPI)
  set(MCMCLB_MPI_LAUNCHER "")
  set(MCMCLB_MPI_SRUN_MPI "")
  set(MCMCLB_MPI_ROOT_FLAGS "")
  set(MCMCLB_MPI_OVERSUB_FLAGS "")
  set(MCMCLB_MPI_TEST_ENV "")
  set(MCMCLB_MPI_WAITING "")
else()
  set(MCMCLB_MPI MPICH CACHE STRING "The MPI library to build with: MPICH or OpenMPI (found by its own wrappers)")
  set_property(CACHE MCMCLB_MPI PROPERTY STRINGS ${MCMCLB_MPI_LIBRARIES})
  if(NOT MCMCLB_MPI IN_LIST MCMCLB_MPI_LIBRARIES)
    message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI}: unknown MPI library (allowed: MPICH, OpenMPI)")
  endif()
  # FindMPI caches what it found; a folder configured for one library keeps that library's paths, so changing
  # MCMCLB_MPI there would mix the two. One folder per library (the presets ci and ci-openmpi).
  if(DEFINED CACHE{MCMCLB_MPI_CONFIGURED} AND NOT MCMCLB_MPI_CONFIGURED STREQUAL MCMCLB_MPI)
    message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI}: this build folder is configured for ${MCMCLB_MPI_CONFIGURED} "
                        "(use a new build folder per MPI library)")
  endif()
  set(MCMCLB_MPI_CONFIGURED ${MCMCLB_MPI} CACHE INTERNAL "The MPI library this build folder was configured for")

  set(_suffix ${MCMCLB_MPI_${MCMCLB_MPI}_SUFFIX})
  foreach(tool IN ITEMS mpicc mpicxx mpiexec)
    find_program(MCMCLB_${tool}_${_suffix} ${tool}.${_suffix})
    if(NOT MCMCLB_${tool}_${_suffix})
      message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI}: ${tool}.${_suffix} not found (install it with ./bootstrap.sh, "
                          "or choose another with -DMCMCLB_MPI=MPICH|OpenMPI)")
    endif()
  endforeach()
  # A wrapper or launcher already set (on the command line, or cached by an older configure) must be the chosen
  # library's, compared by what it resolves to (/usr/bin/mpicc is an alternatives link): refused rather than mixed.
  foreach(pair IN ITEMS MPI_C_COMPILER:mpicc MPI_CXX_COMPILER:mpicxx MPIEXEC_EXECUTABLE:mpiexec)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 var)
    list(GET pair 1 tool)
    if(${var} AND NOT ${var} MATCHES "-NOTFOUND$")
      file(REAL_PATH ${MCMCLB_${tool}_${_suffix}} ours)
      unset(_given)
      find_program(_given NAMES ${${var}} NO_CACHE)
      if(_given)
        file(REAL_PATH ${_given} given)
      else()
        set(given ${${var}})
      endif()
      if(NOT given STREQUAL ours)
        message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI} but ${var}=${${var}} is not its ${tool} "
                            "(${MCMCLB_${tool}_${_suffix}}): drop ${var} or choose its library with MCMCLB_MPI")
      endif()
    endif()
  endforeach()
  set(MPI_C_COMPILER ${MCMCLB_mpicc_${_suffix}} CACHE FILEPATH "MPI C wrapper of MCMCLB_MPI" FORCE)
  set(MPI_CXX_COMPILER ${MCMCLB_mpicxx_${_suffix}} CACHE FILEPATH "MPI C++ wrapper of MCMCLB_MPI" FORCE)
  set(MPIEXEC_EXECUTABLE ${MCMCLB_mpiexec_${_suffix}} CACHE FILEPATH "The launcher of MCMCLB_MPI" FORCE)
  find_package(MPI REQUIRED COMPONENTS C CXX)
  foreach(lang IN ITEMS C CXX)
    set_property(TARGET MPI::MPI_${lang} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                         ${MCMCLB_MPI_${MCMCLB_MPI}_DEFINES})
  endforeach()

  # The headers found must be the chosen library's (a stale cache or an odd installation could still mix them).
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
  set(CMAKE_REQUIRED_QUIET ON)
  check_symbol_exists(${MCMCLB_MPI_${MCMCLB_MPI}_MACRO} mpi.h MCMCLB_MPI_HEADER_IS_${MCMCLB_MPI})
  unset(CMAKE_REQUIRED_QUIET)
  unset(CMAKE_REQUIRED_LIBRARIES)
  if(NOT MCMCLB_MPI_HEADER_IS_${MCMCLB_MPI})
    message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI} but ${MPI_C_COMPILER}'s mpi.h does not define "
                        "${MCMCLB_MPI_${MCMCLB_MPI}_MACRO}: not ${MCMCLB_MPI}")
  endif()

  set(MCMCLB_MPI_ROOT_FLAGS ${MCMCLB_MPI_${MCMCLB_MPI}_ROOT_FLAGS})
  set(MCMCLB_MPI_OVERSUB_FLAGS ${MCMCLB_MPI_${MCMCLB_MPI}_OVERSUB_FLAGS})
  set(MCMCLB_MPI_SRUN_MPI ${MCMCLB_MPI_${MCMCLB_MPI}_SRUN_MPI})
  set(MCMCLB_MPI_TEST_ENV ${MCMCLB_MPI_${MCMCLB_MPI}_TEST_ENV})
  set(MCMCLB_MPI_WAITING "${MCMCLB_MPI_${MCMCLB_MPI}_WAITING}")
  message(STATUS "mcmclb: MPI library ${MCMCLB_MPI} (MPI ${MPI_C_VERSION}), wrappers ${MPI_C_COMPILER} and "
                 "${MPI_CXX_COMPILER}, launcher ${MPIEXEC_EXECUTABLE}; -DMCMCLB_MPI=MPICH|OpenMPI chooses another")
  set(MCMCLB_MPI_LIBRARY ${MCMCLB_MPI})
  set(MCMCLB_MPI_LAUNCHER ${MPIEXEC_EXECUTABLE})
endif()

# The row the binaries carry: the launcher by its full path and the library's flags, as C++ constants.
function(mcmclb_cxx_array out name)
  list(LENGTH ARGN n)
  set(words "")
  foreach(w IN LISTS ARGN)
    string(APPEND words "\"${w}\", ")
  endforeach()
  set(${out} "inline constexpr std::array<std::string_view, ${n}> ${name}{${words}};\n" PARENT_SCOPE)
endfunction()
mcmclb_cxx_array(root_array kRootFlags ${MCMCLB_MPI_ROOT_FLAGS})
mcmclb_cxx_array(oversub_array kOversubscribeFlags ${MCMCLB_MPI_OVERSUB_FLAGS})
file(WRITE ${CMAKE_BINARY_DIR}/generated/mcmclb/mpi_build.hpp.new
     "// Generated by cmake/Mpi.cmake: the MPI library this build uses and how to launch it (its row of the table).\n"
     "#pragma once\n#include <array>\n#include <string_view>\n"
     "namespace mcmclb::mpi_build {\n"
     "inline constexpr std::string_view kLibrary = \"${MCMCLB_MPI_LIBRARY}\";\n"
     "inline constexpr std::string_view kMpiexec = \"${MCMCLB_MPI_LAUNCHER}\";\n"
     "inline constexpr std::string_view kSrunMpi = \"${MCMCLB_MPI_SRUN_MPI}\";\n"
     "inline constexpr std::string_view kWaiting = \"${MCMCLB_MPI_WAITING}\";\n"
     "${root_array}${oversub_array}"
     "}  // namespace mcmclb::mpi_build\n")
# Rewritten only when it changed, so a reconfigure recompiles nothing.
configure_file(${CMAKE_BINARY_DIR}/generated/mcmclb/mpi_build.hpp.new ${CMAKE_BINARY_DIR}/generated/mcmclb/mpi_build.hpp
               COPYONLY)
