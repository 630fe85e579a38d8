# Debian specifics of the install: where the Python module goes, and the .deb
# that CPack makes (`cpack --preset release`, or `cpack` in any build folder).
#
# The release preset configures with CMAKE_INSTALL_PREFIX=/usr, as Debian's
# own packages are built, so GNUInstallDirs puts the libraries and the CMake
# package under lib/<multiarch>/ and the .deb has Debian's layout:
#
#   /usr/bin/synth, /usr/bin/shard-run
#   /usr/include/shardsynth/<module>/*.hpp
#   /usr/lib/x86_64-linux-gnu/libshardsynth_*.a, .../cmake/shardsynth/
#   /usr/lib/python3/dist-packages/shardsynth/ (__init__.py ..., _native.cpython-*.so)

# The Python module. Debian's python3 reads packaged modules from
# /usr/lib/python3/dist-packages and locally installed ones from
# <prefix>/lib/python3.X/dist-packages (/usr/local), so the folder depends on
# the prefix at install time (`cmake --install --prefix`, and cpack installs
# under /usr whatever the build was configured with); SHARDSYNTH_INSTALL_PYTHONDIR
# overrides it.
if(TARGET shardsynth_python)
  set(SHARDSYNTH_INSTALL_PYTHONDIR "" CACHE STRING
      "folder of the Python module, relative to the prefix (empty: Debian's dist-packages for the prefix)")
  execute_process(COMMAND /usr/bin/python3 -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE SHARDSYNTH_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(SHARDSYNTH_INSTALL_PYTHONDIR)
    install(DIRECTORY ${PROJECT_BINARY_DIR}/python/shardsynth DESTINATION ${SHARDSYNTH_INSTALL_PYTHONDIR})
  else()
    install(CODE "
      if(CMAKE_INSTALL_PREFIX MATCHES \"^/usr/?$\")
        set(_shardsynth_pythondir \"lib/python3/dist-packages\")
      else()
        set(_shardsynth_pythondir \"lib/python${SHARDSYNTH_PYTHON_VERSION}/dist-packages\")
      endif()
      file(INSTALL \"${PROJECT_BINARY_DIR}/python/shardsynth\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${_shardsynth_pythondir}\")
    ")
  endif()
endif()

# The .deb: shardsynth_<version>_<arch>.deb in the build folder. Its Depends
# are the runtime libraries the installed binaries and the module link
# (dpkg-shlibdeps reads them off the ELF files: libz3-4, coinor-libclp1, libopenblas0,
# libopenmpi3, libspdlog1.10-fmt9, libfmt9, zlib1g, libstdc++6, ...), never the
# -dev packages; mpirun comes from openmpi-bin. A project that builds against
# the installed CMake package needs the -dev packages too: they are Suggests.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardsynth)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Sharding plans for neural networks, proven optimal with Z3 (synth, shard-run)")
set(CPACK_PACKAGE_DESCRIPTION
    "synth finds the cheapest way to shard a model over a device mesh under a cost model and proves it optimal; shard-run executes the plan on MPI ranks. Also the C++ libraries with their CMake package, and the Python module shardsynth.")
set(CPACK_PACKAGE_CONTACT "shardsynth developers")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_shardsynth_depends "openmpi-bin")
if(TARGET shardsynth_python)
  # What ${python3:Depends} says for a module built for one Python version.
  string(REPLACE "." ";" _shardsynth_python_parts "${SHARDSYNTH_PYTHON_VERSION}")
  list(GET _shardsynth_python_parts 0 _shardsynth_python_major)
  list(GET _shardsynth_python_parts 1 _shardsynth_python_minor)
  math(EXPR _shardsynth_python_next "${_shardsynth_python_minor} + 1")
  string(APPEND _shardsynth_depends ", python3 (>= ${SHARDSYNTH_PYTHON_VERSION}~), "
                                    "python3 (<< ${_shardsynth_python_major}.${_shardsynth_python_next})")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_shardsynth_depends}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "cmake, pkg-config, libz3-dev, coinor-libclp-dev, libboost-graph-dev, libspdlog-dev, libfmt-dev, nlohmann-json3-dev, libopenmpi-dev, libopenblas-dev, zlib1g-dev")
include(CPack)
