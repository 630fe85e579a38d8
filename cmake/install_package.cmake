# Installs the module libraries, their headers, the two commands and a CMake
# package, so that a consumer writes
#
#   find_package(shardsynth REQUIRED)
#   target_link_libraries(app PRIVATE shardsynth::shardsynth)
#
# Headers keep their module paths under include/shardsynth ("ir/graph.hpp").
# The libraries are static, so the package config finds the dependencies
# they link privately too (Z3, zlib, spdlog, OpenBLAS, CUDA when built).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(shardsynth INTERFACE)
add_library(shardsynth::shardsynth ALIAS shardsynth)
target_link_libraries(shardsynth INTERFACE shardsynth_synth shardsynth_costs shardsynth_ir)

set_target_properties(shardsynth_ir PROPERTIES EXPORT_NAME ir)
set_target_properties(shardsynth_costs PROPERTIES EXPORT_NAME costs)
set_target_properties(shardsynth_synth PROPERTIES EXPORT_NAME synth)
set_target_properties(shardsynth_runtime PROPERTIES EXPORT_NAME runtime)

install(TARGETS shardsynth shardsynth_ir shardsynth_costs shardsynth_synth shardsynth_runtime
        EXPORT shardsynthTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS synth shard-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(module ir costs synth runtime)
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
