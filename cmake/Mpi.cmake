# SPDX-License-Identifier: BSD-3-Clause
# The MPI library the build uses, and everything that differs between MPI families, in one table: the macro that
# tells a family from its mpi.h, what its mpiexec needs, and the srun plugin of its batch scripts. The binaries get
# the row of the family they were built with (generated mcmclb/mpi_build.hpp), the MPI tests get its mpiexec flags
# (cmake/MpiTest.cmake) and the Slurm scripts its srun plugin, so a build never mixes one library's programs with
# another's launcher.
#
# Which MPI: the one a cluster user expects CMake to find, with the launcher of the same installation:
#   - wrappers named with MPI_C_COMPILER / MPI_CXX_COMPILER, or MPI_HOME (CMake's FindMPI variables), as given;
#   - otherwise the mpicc on PATH, as a module or Spack leaves it, with the mpicxx and mpiexec beside it;
#   - except where that mpicc is one of Debian's alternatives (/usr/bin/mpicc -> mpicc.mpich or mpicc.openmpi):
#     then Debian's MPICH by its own names, so that installing Open MPI (alternatives priority 50 against MPICH's
#     40) never switches a build silently. MCMCLB_MPI=MPICH|OpenMPI picks Debian's package by name.
# The family is read from what the headers define, never from a name: MPICH and its derivatives (Intel MPI,
# MVAPICH, Cray MPICH) define MPICH_VERSION, Open MPI and its derivatives OPEN_MPI. An MPI of no known family
# builds with a note and no library-specific launcher flags.
#
# Columns, per family:
#   _MACRO         a macro only its mpi.h defines
#   _LAUNCHER_SAYS what its mpiexec --version prints (a regular expression), to refuse a launcher of the other family
#   _DEBIAN_SUFFIX the suffix of Debian's wrappers and launcher for it (mpicc.<suffix>, mpiexec.<suffix>)
#   _ROOT_FLAGS    what its mpiexec needs to start as root (Open MPI refuses root without them; MPICH does not);
#                  added only when running as root
#   _OVERSUB_FLAGS what its mpiexec needs when ranks outnumber the cores (Open MPI refuses more ranks than slots,
#                  and would bind every rank to a core of its own; unbound, the ranks share the cores; MPICH's
#                  Hydra starts any number and binds nothing unless asked)
#   _SRUN_MPI      the srun --mpi plugin its ranks talk to under Slurm by default (Debian's slurm-wlm has pmi2 and
#                  pmix; Debian's Open MPI is built against PMIx, MPICH's Hydra-less ranks speak PMI-2); a study
#                  sets its site's with job.srun_mpi
#   _DEFINES       compile definitions for every user of its mpi.h (Open MPI: OMPI_SKIP_MPICXX, since we call the C
#                  API only and the headers of its deprecated C++ bindings warn under -Wextra, fatal with -Werror)
#   _TEST_ENV      environment for the tests under its mpiexec (Open MPI: the documented pair that allows root,
#                  for the tests that call mpiexec themselves; and odls_base_sigkill_timeout 0: when a rank exits
#                  non-zero, as every refusal of bad input does, Open MPI 4.1's mpiexec waits that many seconds
#                  twice before it kills the job's other processes, 2 s by default even when none is left,
#                  which made each refusal a test checks take 2.5 s against 0.4 s)
#   _WAITING       how it waits where ranks outnumber cores, and what that costs, for the sweep's note on
#                  oversubscribed points (measured on a 2-core VM: docs/guide/commbench.md, P = 8 against P = 2)
set(MCMCLB_MPI_FAMILIES MPICH OpenMPI)
set(MCMCLB_MPI_MPICH_MACRO MPICH_VERSION)
set(MCMCLB_MPI_MPICH_LAUNCHER_SAYS "HYDRA|Intel\\(R\\) MPI|MVAPICH")
set(MCMCLB_MPI_MPICH_DEBIAN_SUFFIX mpich)
set(MCMCLB_MPI_MPICH_ROOT_FLAGS "")
set(MCMCLB_MPI_MPICH_OVERSUB_FLAGS "")
set(MCMCLB_MPI_MPICH_SRUN_MPI pmi2)
set(MCMCLB_MPI_MPICH_TEST_ENV "")
set(MCMCLB_MPI_MPICH_DEFINES "")
set(MCMCLB_MPI_MPICH_WAITING "MPICH busy-polls while it waits, so communicator creation costs 100-1000x more")
set(MCMCLB_MPI_OpenMPI_MACRO OPEN_MPI)
set(MCMCLB_MPI_OpenMPI_LAUNCHER_SAYS "OpenRTE|Open MPI|PRRTE")
set(MCMCLB_MPI_OpenMPI_DEBIAN_SUFFIX openmpi)
set(MCMCLB_MPI_OpenMPI_ROOT_FLAGS --allow-run-as-root)
set(MCMCLB_MPI_OpenMPI_OVERSUB_FLAGS --oversubscribe --bind-to none)
set(MCMCLB_MPI_OpenMPI_SRUN_MPI pmix)
set(MCMCLB_MPI_OpenMPI_DEFINES OMPI_SKIP_MPICXX=1)
set(MCMCLB_MPI_OpenMPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_odls_base_sigkill_timeout=0")
set(MCMCLB_MPI_OpenMPI_WAITING
    "Open MPI yields the core while it waits there, yet communicator creation still costs some 20x more")
# Derivatives named in messages and provenance by what MPI_Get_library_version says (the family decides the rest).
set(MCMCLB_MPI_DERIVATIVES "Intel MPI:Intel\\(R\\) MPI" "MVAPICH:MVAPICH" "Cray MPICH:CRAY MPICH")

include(${CMAKE_CURRENT_LIST_DIR}/Dependencies.cmake)

if(MCMCLB_SMPI)
  # The simulation build's MPI is SimGrid's (cmake/Smpi.cmake), launched by smpirun through --launcher smpi; its
  # binaries carry no mpiexec.
  set(MCMCLB_MPI_LIBRARY SMPI)
  set(MCMCLB_MPI_FAMILY SMPI)
  set(MCMCLB_MPI_LAUNCHER "")
  set(MCMCLB_MPI_SRUN_MPI "")
  set(MCMCLB_MPI_ROOT_FLAGS "")
  set(MCMCLB_MPI_OVERSUB_FLAGS "")
  set(MCMCLB_MPI_TEST_ENV "")
  set(MCMCLB_MPI_WAITING "")
else()
  set(MCMCLB_MPI "" CACHE STRING "Debian's MPI package by name, MPICH or OpenMPI (its suffixed wrappers); empty: the \
MPI a cluster user has (MPI_C_COMPILER, MPI_HOME, or mpicc on PATH; Debian's MPICH where mpicc is Debian's)")
  set_property(CACHE MCMCLB_MPI PROPERTY STRINGS "" ${MCMCLB_MPI_FAMILIES})
  if(MCMCLB_MPI AND NOT MCMCLB_MPI IN_LIST MCMCLB_MPI_FAMILIES)
    message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI}: unknown MPI library (allowed: MPICH, OpenMPI, or empty for the "
                        "MPI on PATH, MPI_HOME or MPI_C_COMPILER)")
  endif()
  # FindMPI caches what it found; a folder configured for one library keeps that library's paths, so changing
  # MCMCLB_MPI there would mix the two. One folder per library (the presets ci and ci-openmpi).
  set(_choice "${MCMCLB_MPI}")
  if(NOT _choice)
    set(_choice "(empty)")
  endif()
  if(DEFINED CACHE{MCMCLB_MPI_CONFIGURED} AND NOT MCMCLB_MPI_CONFIGURED STREQUAL _choice)
    message(FATAL_ERROR "MCMCLB_MPI=${MCMCLB_MPI}: this build folder is configured for MCMCLB_MPI="
                        "${MCMCLB_MPI_CONFIGURED} (use a new build folder per MPI library)")
  endif()
  set(MCMCLB_MPI_CONFIGURED "${_choice}" CACHE INTERNAL "The MCMCLB_MPI this build folder was configured with")

  # Which installation, and why (said at the end of configure).
  set(_debian "${MCMCLB_MPI}")
  set(_how "named by MCMCLB_MPI")
  if(NOT MCMCLB_MPI)
    set(_given "")
    foreach(var IN ITEMS MPI_C_COMPILER MPI_CXX_COMPILER MPIEXEC_EXECUTABLE MPI_HOME)
      if(${var} AND NOT ${var} MATCHES "-NOTFOUND$" AND NOT DEFINED CACHE{MCMCLB_MPI_FOUND_${var}})
        list(APPEND _given ${var})
      endif()
    endforeach()
    if(DEFINED ENV{MPI_HOME} AND NOT MPI_HOME)
      set(MPI_HOME $ENV{MPI_HOME})
      list(APPEND _given "MPI_HOME (environment)")
    endif()
    if(DEFINED CACHE{MCMCLB_MPI_DEBIAN_FOUND})
      set(_debian ${MCMCLB_MPI_DEBIAN_FOUND})  # a reconfigure keeps what the first one resolved
      set(_how "Debian's, found by its own wrappers")
    elseif(DEFINED CACHE{MCMCLB_MPI_FOUND_MPI_C_COMPILER} AND EXISTS "${MPI_C_COMPILER}")
      # A module's MPI found on PATH by the first configure: kept, as Debian's is, whatever PATH holds now (the
      # module unloaded, or another loaded). Before, a reconfigure without the module took Debian's mpicc by its
      # alternatives, refused the cached wrappers, and left the folder refusing every configure after.
      set(_how "the mpicc on PATH when this folder was first configured")
      find_program(_mpicc_now NAMES mpicc NO_CACHE)
      if(_mpicc_now AND NOT _mpicc_now STREQUAL MPI_C_COMPILER)
        message(STATUS "mcmclb: the mpicc on PATH is now ${_mpicc_now}; this folder keeps ${MPI_C_COMPILER} "
                       "(a new build folder builds with the one on PATH)")
      endif()
      unset(_mpicc_now)
    elseif(_given)
      string(REPLACE ";" ", " _how "${_given}")
      set(_how "as given by ${_how}")
    else()
      find_program(_mpicc NAMES mpicc NO_CACHE)
      if(_mpicc)
        file(REAL_PATH ${_mpicc} _real)
      endif()
      # Debian's suffixed wrappers, in one pass: the first family installed (MPICH before Open MPI) is the default,
      # and the mpicc on PATH is Debian's when it resolves to the same file as one of them (alternatives links).
      set(_debian_default "")
      set(_on_path "")
      foreach(family IN LISTS MCMCLB_MPI_FAMILIES)
        find_program(_suffixed mpicc.${MCMCLB_MPI_${family}_DEBIAN_SUFFIX} NO_CACHE)
        if(_suffixed)
          if(NOT _debian_default)
            set(_debian_default ${family})
          endif()
          file(REAL_PATH ${_suffixed} _suffixed_real)
          if(_mpicc AND _suffixed_real STREQUAL _real)
            set(_on_path ${family})
          endif()
        endif()
        unset(_suffixed)
      endforeach()
      if(_mpicc AND NOT _on_path)
        # A module's or Spack's MPI: its wrappers and its launcher, from the folder that holds its mpicc.
        get_filename_component(_bin ${_mpicc} DIRECTORY)
        find_program(_mpicxx NAMES mpicxx mpic++ mpiCC HINTS ${_bin} NO_DEFAULT_PATH NO_CACHE)
        find_program(_mpiexec NAMES mpiexec mpirun HINTS ${_bin} NO_DEFAULT_PATH NO_CACHE)
        set(MPI_C_COMPILER ${_mpicc} CACHE FILEPATH "MPI C wrapper (mpicc on PATH)")
        set(MCMCLB_MPI_FOUND_MPI_C_COMPILER ON CACHE INTERNAL "MPI_C_COMPILER was found, not given")
        if(_mpicxx)
          set(MPI_CXX_COMPILER ${_mpicxx} CACHE FILEPATH "MPI C++ wrapper (beside mpicc)")
          set(MCMCLB_MPI_FOUND_MPI_CXX_COMPILER ON CACHE INTERNAL "MPI_CXX_COMPILER was found, not given")
        endif()
        if(_mpiexec)
          set(MPIEXEC_EXECUTABLE ${_mpiexec} CACHE FILEPATH "The MPI launcher (beside mpicc)")
          set(MCMCLB_MPI_FOUND_MPIEXEC_EXECUTABLE ON CACHE INTERNAL "MPIEXEC_EXECUTABLE was found, not given")
        endif()
        set(_how "the mpicc on PATH")
      else()
        # Debian's alternatives, or no mpicc on PATH: Debian's MPICH by name where installed, else its Open MPI.
        set(_debian ${_debian_default})
        if(NOT _debian)
          mcmclb_missing_dependency(MPI "or load your MPI's module (mpicc on PATH), or set MPI_HOME or "
                                        "MPI_C_COMPILER and MPI_CXX_COMPILER")
        endif()
        set(MCMCLB_MPI_DEBIAN_FOUND ${_debian} CACHE INTERNAL "Debian's MPI package this folder resolved to")
        set(_how "Debian's, found by its own wrappers")
        if(_on_path AND NOT _on_path STREQUAL _debian)
          string(APPEND _how " (the mpicc on PATH is Debian's ${_on_path}: -DMCMCLB_MPI=${_on_path} builds with it)")
        endif()
      endif()
    endif()
  endif()

  if(_debian)
    set(_suffix ${MCMCLB_MPI_${_debian}_DEBIAN_SUFFIX})
    foreach(tool IN ITEMS mpicc mpicxx mpiexec)
      find_program(MCMCLB_${tool}_${_suffix} ${tool}.${_suffix})
      if(NOT MCMCLB_${tool}_${_suffix})
        message(FATAL_ERROR "MCMCLB_MPI=${_debian}: ${tool}.${_suffix} not found (Debian's name; install it with "
                            "./bootstrap.sh, or leave MCMCLB_MPI empty to use the mpicc on PATH or MPI_C_COMPILER)")
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
        unset(_given_tool)
        find_program(_given_tool NAMES ${${var}} NO_CACHE)
        if(_given_tool)
          file(REAL_PATH ${_given_tool} given)
        else()
          set(given ${${var}})
        endif()
        if(NOT given STREQUAL ours)
          message(FATAL_ERROR "MCMCLB_MPI=${_debian} but ${var}=${${var}} is not its ${tool} "
                              "(${MCMCLB_${tool}_${_suffix}}): drop ${var} or choose its library with MCMCLB_MPI")
        endif()
      endif()
    endforeach()
    set(MPI_C_COMPILER ${MCMCLB_mpicc_${_suffix}} CACHE FILEPATH "MPI C wrapper of MCMCLB_MPI" FORCE)
    set(MPI_CXX_COMPILER ${MCMCLB_mpicxx_${_suffix}} CACHE FILEPATH "MPI C++ wrapper of MCMCLB_MPI" FORCE)
    set(MPIEXEC_EXECUTABLE ${MCMCLB_mpiexec_${_suffix}} CACHE FILEPATH "The launcher of MCMCLB_MPI" FORCE)
  elseif(MPI_C_COMPILER AND NOT MPIEXEC_EXECUTABLE)
    # Wrappers given, launcher not: the one of the same installation, beside the wrapper (as named, then as it
    # resolves), before FindMPI would take the first mpiexec on PATH.
    # A wrapper named with a suffix (Debian's mpicc.openmpi, mpicc-4.1) has its launcher under the same suffix.
    find_program(_cc NAMES ${MPI_C_COMPILER} NO_CACHE)
    if(_cc)
      file(REAL_PATH ${_cc} _cc_real)
      get_filename_component(_dir ${_cc} DIRECTORY)
      get_filename_component(_real_dir ${_cc_real} DIRECTORY)
      get_filename_component(_cc_name ${_cc} NAME)
      string(REGEX REPLACE "^mpicc" "" _cc_suffix "${_cc_name}")
      find_program(MPIEXEC_EXECUTABLE NAMES mpiexec${_cc_suffix} mpirun${_cc_suffix} mpiexec mpirun
                   HINTS ${_dir} ${_real_dir} NO_DEFAULT_PATH)
    endif()
  elseif(MPI_HOME AND NOT MPIEXEC_EXECUTABLE)
    find_program(MPIEXEC_EXECUTABLE NAMES mpiexec mpirun HINTS ${MPI_HOME}/bin NO_DEFAULT_PATH)
  endif()

  set(MPI_DETERMINE_LIBRARY_VERSION ON)
  find_package(MPI COMPONENTS C CXX)
  if(NOT MPI_FOUND)
    mcmclb_missing_dependency(MPI "or load your MPI's module (mpicc on PATH), or set MPI_HOME or MPI_C_COMPILER "
                                  "and MPI_CXX_COMPILER (CMake's FindMPI found C: ${MPI_C_FOUND}, C++: ${MPI_CXX_FOUND})")
  endif()

  # The family, from what the headers define.
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
  set(CMAKE_REQUIRED_QUIET ON)
  set(MCMCLB_MPI_FAMILY "")
  foreach(family IN LISTS MCMCLB_MPI_FAMILIES)
    check_symbol_exists(${MCMCLB_MPI_${family}_MACRO} mpi.h MCMCLB_MPI_HEADER_IS_${family})
    if(MCMCLB_MPI_HEADER_IS_${family})
      set(MCMCLB_MPI_FAMILY ${family})
      break()
    endif()
  endforeach()
  unset(CMAKE_REQUIRED_QUIET)
  unset(CMAKE_REQUIRED_LIBRARIES)
  if(_debian AND NOT MCMCLB_MPI_FAMILY STREQUAL _debian)
    message(FATAL_ERROR "MCMCLB_MPI=${_debian} but ${MPI_C_COMPILER}'s mpi.h does not define "
                        "${MCMCLB_MPI_${_debian}_MACRO}: not ${_debian}")
  endif()

  # The launcher must be of the headers' family: a module's mpicc with Debian's mpiexec first on PATH would start
  # the ranks as singletons of the wrong library.
  if(NOT MPIEXEC_EXECUTABLE)
    mcmclb_missing_dependency(MPI "or set MPIEXEC_EXECUTABLE to your MPI's launcher (no mpiexec or mpirun was "
                                  "found beside ${MPI_C_COMPILER})")
  endif()
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _says ERROR_VARIABLE _says TIMEOUT 20
                  RESULT_VARIABLE _rc)
  foreach(family IN LISTS MCMCLB_MPI_FAMILIES)
    if(NOT family STREQUAL MCMCLB_MPI_FAMILY AND _says MATCHES "${MCMCLB_MPI_${family}_LAUNCHER_SAYS}")
      message(FATAL_ERROR "MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE} is ${family}'s launcher but ${MPI_C_COMPILER}'s "
                          "mpi.h is ${MCMCLB_MPI_FAMILY}'s: set MPIEXEC_EXECUTABLE to the launcher of the same MPI")
    endif()
  endforeach()

  string(REGEX REPLACE "\n.*" "" MCMCLB_MPI_VERSION_LINE "${MPI_C_LIBRARY_VERSION_STRING}")
  string(REPLACE "\t" " " MCMCLB_MPI_VERSION_LINE "${MCMCLB_MPI_VERSION_LINE}")
  string(STRIP "${MCMCLB_MPI_VERSION_LINE}" MCMCLB_MPI_VERSION_LINE)
  if(MCMCLB_MPI_FAMILY)
    set(MCMCLB_MPI_LIBRARY ${MCMCLB_MPI_FAMILY})
    foreach(row IN LISTS MCMCLB_MPI_DERIVATIVES)
      string(REPLACE ":" ";" row "${row}")
      list(GET row 0 name)
      list(GET row 1 says)
      if(MCMCLB_MPI_VERSION_LINE MATCHES "${says}")
        set(MCMCLB_MPI_LIBRARY ${name})
      endif()
    endforeach()
    set(_row MCMCLB_MPI_${MCMCLB_MPI_FAMILY})
    foreach(lang IN ITEMS C CXX)
      set_property(TARGET MPI::MPI_${lang} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS ${${_row}_DEFINES})
    endforeach()
    set(MCMCLB_MPI_ROOT_FLAGS ${${_row}_ROOT_FLAGS})
    set(MCMCLB_MPI_OVERSUB_FLAGS ${${_row}_OVERSUB_FLAGS})
    set(MCMCLB_MPI_SRUN_MPI ${${_row}_SRUN_MPI})
    set(MCMCLB_MPI_TEST_ENV ${${_row}_TEST_ENV})
    set(MCMCLB_MPI_WAITING "${${_row}_WAITING}")
    set(_family "family ${MCMCLB_MPI_FAMILY}")
  else()
    message(STATUS "mcmclb: ${MPI_C_COMPILER}'s mpi.h defines neither MPICH_VERSION nor OPEN_MPI: an MPI of no "
                   "known family, built with no library-specific launcher flags (srun: the site's MpiDefault)")
    set(MCMCLB_MPI_LIBRARY "MPI")
    set(MCMCLB_MPI_ROOT_FLAGS "")
    set(MCMCLB_MPI_OVERSUB_FLAGS "")
    set(MCMCLB_MPI_SRUN_MPI "")
    set(MCMCLB_MPI_TEST_ENV "")
    set(MCMCLB_MPI_WAITING "")
    set(_family "no known family")
  endif()
  # What the test folder needs to know: which of Debian's packages this folder is (the Open MPI pass builds a
  # second folder with Debian's Open MPI beside a Debian MPICH build only).
  set(MCMCLB_MPI_DEBIAN "${_debian}")
  message(STATUS "mcmclb: MPI ${MCMCLB_MPI_LIBRARY} (${MCMCLB_MPI_VERSION_LINE}; ${_family}), ${_how}: wrappers "
                 "${MPI_C_COMPILER} and ${MPI_CXX_COMPILER}, launcher ${MPIEXEC_EXECUTABLE}")
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
     "inline constexpr std::string_view kFamily = \"${MCMCLB_MPI_FAMILY}\";\n"
     "inline constexpr std::string_view kMpiexec = \"${MCMCLB_MPI_LAUNCHER}\";\n"
     "inline constexpr std::string_view kSrunMpi = \"${MCMCLB_MPI_SRUN_MPI}\";\n"
     "inline constexpr std::string_view kWaiting = \"${MCMCLB_MPI_WAITING}\";\n"
     "${root_array}${oversub_array}"
     "}  // namespace mcmclb::mpi_build\n")
# Rewritten only when it changed, so a reconfigure recompiles nothing.
configure_file(${CMAKE_BINARY_DIR}/generated/mcmclb/mpi_build.hpp.new ${CMAKE_BINARY_DIR}/generated/mcmclb/mpi_build.hpp
               COPYONLY)
