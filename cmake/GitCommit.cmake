# SPDX-License-Identifier: BSD-3-Clause
# Stamps the git commit into the build on every build (not only at configure time), so the provenance
# recorded by benchmarks names the code that actually ran.
set(MCMCLB_GIT_COMMIT_CPP ${CMAKE_BINARY_DIR}/generated/git_commit.cpp)
add_custom_target(mcmclb_git_commit_stamp
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${MCMCLB_GIT_COMMIT_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteGitCommit.cmake
  BYPRODUCTS ${MCMCLB_GIT_COMMIT_CPP}
  COMMENT "Stamping git commit"
  VERBATIM)
