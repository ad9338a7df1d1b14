# `cmake --install` and CPack (docs/vendor.md, "Install gscheck"). The executables go together in
# libexec/gscheck/ because each finds its companions next to itself (/proc/self/exe, symlinks
# resolved): the worker, the Python host plugin and its helper modules; bin/gscheck links there.
# Data gscheck reads (corpus, bench problems) goes to share/gscheck, found from libexec the same
# way; the plugin header to include/; a CMake package to lib/cmake/gscheck.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GSCHECK_INSTALL_LIBEXEC "${CMAKE_INSTALL_LIBEXECDIR}/gscheck")
set(GSCHECK_INSTALL_DATA "${CMAKE_INSTALL_DATADIR}/gscheck")
set(GSCHECK_INSTALL_CMAKE "${CMAKE_INSTALL_LIBDIR}/cmake/gscheck")

install(TARGETS gscheck gscheck-worker RUNTIME DESTINATION "${GSCHECK_INSTALL_LIBEXEC}"
        COMPONENT gscheck)
if(TARGET gscheck_python_plugin)
  install(TARGETS gscheck_python_plugin LIBRARY DESTINATION "${GSCHECK_INSTALL_LIBEXEC}"
          COMPONENT gscheck)
endif()
# Python backends import these without a sys.path line (host.py adds <host plugin dir>/python).
install(FILES plugins/python/tf_checks.py plugins/python/signature_cache.py
        DESTINATION "${GSCHECK_INSTALL_LIBEXEC}/python" COMPONENT gscheck)
# bin/gscheck -> ../libexec/gscheck/gscheck, relative so the tree can move (tar.gz, DESTDIR).
file(RELATIVE_PATH _gscheck_bin_to_exe "/${CMAKE_INSTALL_BINDIR}"
     "/${GSCHECK_INSTALL_LIBEXEC}/gscheck")
install(CODE "
  set(_bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  file(MAKE_DIRECTORY \"\${_bin}\")
  file(CREATE_LINK \"${_gscheck_bin_to_exe}\" \"\${_bin}/gscheck\" SYMBOLIC)
  message(STATUS \"Installing: \${_bin}/gscheck -> ${_gscheck_bin_to_exe}\")"
  COMPONENT gscheck)

install(FILES include/gscheck/plugin.h DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/gscheck"
        COMPONENT gscheck)
install(FILES corpus/case.schema.json reports/report.schema.json
              reports/known_failures.schema.json reports/bench_report.schema.json
        DESTINATION "${GSCHECK_INSTALL_DATA}/schemas" COMPONENT gscheck)
install(DIRECTORY corpus/golden corpus/regressions DESTINATION "${GSCHECK_INSTALL_DATA}/corpus"
        COMPONENT gscheck FILES_MATCHING PATTERN "*.json")
install(FILES bench/problems/default.json DESTINATION "${GSCHECK_INSTALL_DATA}/bench/problems"
        COMPONENT gscheck)
install(FILES examples/plugins/gather_nd_plugin.c examples/plugins/gather_nd_plugin_declines.json
              examples/python/numpy_backend.py examples/python/numpy_known_failures.json
        DESTINATION "${GSCHECK_INSTALL_DATA}/examples" COMPONENT gscheck)
install(DIRECTORY docs/ DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT gscheck
        FILES_MATCHING PATTERN "*.md")
install(FILES README.md DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT gscheck)

# The CMake package: find_package(gscheck) gives gscheck::gscheck (the CLI), gscheck::plugin (the
# header) and gscheck_add_test().
configure_package_config_file(cmake/gscheckConfig.cmake.in
                              "${PROJECT_BINARY_DIR}/cmake/gscheckConfig.cmake"
                              INSTALL_DESTINATION "${GSCHECK_INSTALL_CMAKE}"
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR GSCHECK_INSTALL_LIBEXEC
                                        GSCHECK_INSTALL_DATA)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/gscheckConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/gscheckConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/gscheckConfigVersion.cmake"
        DESTINATION "${GSCHECK_INSTALL_CMAKE}" COMPONENT gscheck)

# CPack: a .deb and a .tar.gz of the same tree (`cpack --config build/<preset>/CPackConfig.cmake`).
set(CPACK_PACKAGE_NAME gscheck)
set(CPACK_PACKAGE_VENDOR "gscheck")
set(CPACK_PACKAGE_CONTACT "gscheck maintainers <gscheck@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Conformance and fuzzing harness for TensorFlow's gather and scatter ops")
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_COMPONENTS_ALL gscheck)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The runtime libraries' packages from the binaries themselves (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGE_FILE_NAME "gscheck-${PROJECT_VERSION}-${CMAKE_SYSTEM_PROCESSOR}")
include(CPack)
