# SPDX-License-Identifier: BSD-3-Clause
# Every third-party dependency in one table: what needs it and where a user without root gets it. Each is found by
# CMake's standard means (find_package, find_path, find_program), so a prefix from Spack, a module or a hand-made
# install serves when it is on CMAKE_PREFIX_PATH (or PATH, for programs). A missing one stops configure with one
# line naming it, what needs it, its Debian and Spack packages, and the variable that points CMake at it.
#
# Columns, per dependency:
#   _FIND    how it is found: package <Name> | path <file under an include folder> | program <name>
#   _NEEDS   what in mcmclb needs it (when it is optional, the option that turns that part off)
#   _DEBIAN  its Debian package (bootstrap.sh installs it)
#   _SPACK   its Spack package (spack install <name>, or a `depends_on` of a Spack environment)
set(MCMCLB_DEPENDENCY_yaml-cpp_FIND package yaml-cpp)
set(MCMCLB_DEPENDENCY_yaml-cpp_NEEDS "the YAML studies (study/), so every mcmclb build")
set(MCMCLB_DEPENDENCY_yaml-cpp_DEBIAN libyaml-cpp-dev)
set(MCMCLB_DEPENDENCY_yaml-cpp_SPACK yaml-cpp)

set(MCMCLB_DEPENDENCY_Random123_FIND path Random123/philox.h)
set(MCMCLB_DEPENDENCY_Random123_NEEDS "the compute workload's random numbers (kernel/), so every mcmclb build")
set(MCMCLB_DEPENDENCY_Random123_DEBIAN librandom123-dev)
set(MCMCLB_DEPENDENCY_Random123_SPACK random123)

set(MCMCLB_DEPENDENCY_benchmark_FIND package benchmark)
set(MCMCLB_DEPENDENCY_benchmark_NEEDS "mcmclb-commbench, the Fig. 1 benchmark (its timing loop)")
set(MCMCLB_DEPENDENCY_benchmark_DEBIAN libbenchmark-dev)
set(MCMCLB_DEPENDENCY_benchmark_SPACK benchmark)

set(MCMCLB_DEPENDENCY_GTest_FIND package GTest)
set(MCMCLB_DEPENDENCY_GTest_NEEDS "the test suites only (-DBUILD_TESTING=OFF builds without them)")
set(MCMCLB_DEPENDENCY_GTest_DEBIAN libgtest-dev)
set(MCMCLB_DEPENDENCY_GTest_SPACK googletest)

set(MCMCLB_DEPENDENCY_SimGrid_FIND program smpirun)
set(MCMCLB_DEPENDENCY_SimGrid_NEEDS "the simulation build only (-DMCMCLB_SMPI=ON)")
set(MCMCLB_DEPENDENCY_SimGrid_DEBIAN libsimgrid-dev)
set(MCMCLB_DEPENDENCY_SimGrid_SPACK simgrid)

set(MCMCLB_DEPENDENCY_MPI_NEEDS "every build but the simulation one")
set(MCMCLB_DEPENDENCY_MPI_DEBIAN "mpich and libmpich-dev")
set(MCMCLB_DEPENDENCY_MPI_SPACK "mpich or openmpi (any provider of mpi)")

# The one-line refusal for dependency <name>; <how> says where CMake looked and how to point it elsewhere.
function(mcmclb_missing_dependency name how)
  message(FATAL_ERROR "mcmclb: ${name} not found (needed by ${MCMCLB_DEPENDENCY_${name}_NEEDS}): install Debian's "
                      "${MCMCLB_DEPENDENCY_${name}_DEBIAN} or Spack's ${MCMCLB_DEPENDENCY_${name}_SPACK}, ${how}")
endfunction()

# mcmclb_dependency(<name> [OUT <variable>]): finds <name> by its row. A package defines its targets; a path sets
# <variable> to the include folder holding the file; a program sets <variable> to its path.
function(mcmclb_dependency name)
  cmake_parse_arguments(D "" "OUT" "" ${ARGN})
  set(find ${MCMCLB_DEPENDENCY_${name}_FIND})
  list(GET find 0 kind)
  list(GET find 1 what)
  if(kind STREQUAL "package")
    find_package(${what} QUIET)
    if(NOT ${what}_FOUND)
      mcmclb_missing_dependency(${name} "or add its prefix to CMAKE_PREFIX_PATH (or set ${what}_DIR)")
    endif()
  else()
    # find_path and find_program take the same arguments; they differ in where they look and what a user sets.
    set(hint "put its bin folder on PATH (looked for ${what})")
    if(kind STREQUAL "path")
      set(hint "add its prefix to CMAKE_PREFIX_PATH (looked for include/${what})")
    endif()
    cmake_language(CALL find_${kind} MCMCLB_${name}_FOUND_AT ${what})
    if(NOT MCMCLB_${name}_FOUND_AT)
      mcmclb_missing_dependency(${name} "or ${hint}")
    endif()
    set(${D_OUT} ${MCMCLB_${name}_FOUND_AT} PARENT_SCOPE)
  endif()
endfunction()
