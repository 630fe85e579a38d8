# Installs the module libraries, their headers, the two commands and a CMake
# package, so that a consumer writes
#
#   find_package(shardsynth REQUIRED)
#   target_link_libraries(app PRIVATE shardsynth::shardsynth)
#
# Headers keep their module paths under include/shardsynth ("ir/graph.hpp",
# "synth/solver/problem.hpp").
# The libraries are static, so the package config finds the dependencies
# they link privately too (Z3, Clp, zlib, OpenBLAS, CUDA when built).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(shardsynth INTERFACE)
add_library(shardsynth::shardsynth ALIAS shardsynth)
target_link_libraries(shardsynth INTERFACE shardsynth_synth shardsynth_solver shardsynth_stages shardsynth_report
                                           shardsynth_costs shardsynth_ir shardsynth_common)

# shardsynth_<name> is exported as shardsynth::<name>.
set(SHARDSYNTH_LIBRARIES common ir costs solver synth stages report runtime)
foreach(name ${SHARDSYNTH_LIBRARIES})
  set_target_properties(shardsynth_${name} PROPERTIES EXPORT_NAME ${name})
  list(APPEND SHARDSYNTH_LIBRARY_TARGETS shardsynth_${name})
endforeach()

install(TARGETS shardsynth ${SHARDSYNTH_LIBRARY_TARGETS}
        EXPORT shardsynthTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS synth shard-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# synth/'s sub-modules (solver/, stages/, report/) come with it.
foreach(module common ir costs synth runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/shardsynth/${module}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()

set(SHARDSYNTH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shardsynth)
install(EXPORT shardsynthTargets NAMESPACE shardsynth:: DESTINATION ${SHARDSYNTH_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/shardsynthConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/shardsynthConfig.cmake
                              INSTALL_DESTINATION ${SHARDSYNTH_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shardsynthConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/shardsynthConfig.cmake ${PROJECT_BINARY_DIR}/shardsynthConfigVersion.cmake
        DESTINATION ${SHARDSYNTH_CMAKE_DIR})
