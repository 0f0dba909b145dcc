# The results store (results/include/mcmclb/result_store.hpp): library mcmclb_results_store, alias
# mcmclb::results_store. No MPI: rank 0 of a run and the sweep process both link it. Included from the top-level
# CMakeLists.txt; kept in its own file so that it merges beside whatever results/CMakeLists.txt holds.

# The CSV helpers it uses (escape, line, split_line) have no MPI either; mcmclb_support links MPI, so they get a
# target of their own here. When csv.cpp moves into results/, define mcmclb_csv there and drop this block.
if(NOT TARGET mcmclb_csv)
  add_library(mcmclb_csv STATIC ${PROJECT_SOURCE_DIR}/kernel/src/csv.cpp)
  target_include_directories(mcmclb_csv PUBLIC ${PROJECT_SOURCE_DIR}/kernel/include)
  target_link_libraries(mcmclb_csv PRIVATE mcmclb_warnings)
endif()

add_library(mcmclb_results_store STATIC ${CMAKE_CURRENT_LIST_DIR}/src/result_store.cpp)
add_library(mcmclb::results_store ALIAS mcmclb_results_store)
target_include_directories(mcmclb_results_store PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
target_link_libraries(mcmclb_results_store PUBLIC mcmclb_csv PRIVATE mcmclb_warnings)

if(BUILD_TESTING)
  find_package(GTest REQUIRED)
  # Plain GoogleTest (no mpiexec): forks writer processes itself.
  add_executable(test_result_store ${PROJECT_SOURCE_DIR}/tests/test_result_store.cpp)
  target_link_libraries(test_result_store PRIVATE mcmclb::results_store GTest::gtest_main mcmclb_warnings)
  add_test(NAME result_store COMMAND test_result_store)
  set_tests_properties(result_store PROPERTIES TIMEOUT 300)
endif()
