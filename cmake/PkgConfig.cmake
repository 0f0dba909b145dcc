# SPDX-License-Identifier: BSD-3-Clause
# mcmclb_install_pkgconfig(<name>): installs <prefix>/<libdir>/pkgconfig/<name>.pc from cmake/<name>.pc.in, one
# call per installed library. The file is written at install time, because only then is the prefix known
# (cmake --install --prefix P overrides the configure-time CMAKE_INSTALL_PREFIX). The templates' Libs carry
# -Wl,-rpath, so that a program built with `mpicc prog.c $(pkg-config --cflags --libs <name>)` starts without
# LD_LIBRARY_PATH.
include(GNUInstallDirs)

function(mcmclb_install_pkgconfig name)
  install(CODE "
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    set(libdir \"${CMAKE_INSTALL_LIBDIR}\")
    set(includedir \"${CMAKE_INSTALL_INCLUDEDIR}\")
    foreach(var IN ITEMS libdir includedir)
      if(NOT IS_ABSOLUTE \"\${\${var}}\")
        set(\${var} \"\${CMAKE_INSTALL_PREFIX}/\${\${var}}\")
      endif()
    endforeach()
    set(pc_file \"\$ENV{DESTDIR}\${libdir}/pkgconfig/${name}.pc\")
    message(STATUS \"Installing: \${pc_file}\")
    configure_file(\"${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in\" \"\${pc_file}\" @ONLY)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pc_file}\")
  ")
endfunction()
