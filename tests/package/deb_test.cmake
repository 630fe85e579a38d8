# Makes the .deb with cpack (cmake/debian_package.cmake), checks its contents
# and its Depends (runtime libraries, no -dev package), unpacks it into a
# scratch root and runs what it installed there with LD_LIBRARY_PATH unset:
# synth --version (the same line as the build's synth), shard-run --version,
# the README's MLP run, and the Python module. Run by ctest as
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCPACK=... -DBUILD_SYNTH=... [-DHAVE_PYTHON=1 -DPYTHON=...] -P deb_test.cmake
# Prints "deb_test: SKIPPED" (ctest counts it skipped) without dpkg-deb,
# dpkg-shlibdeps (dpkg-dev) or file, which scripts/bootstrap installs.
# cpack first runs the build's `preinstall` target, as `make package` does: a
# no-op on the up-to-date build that ctest runs on.
foreach(var BUILD_DIR WORK_DIR CPACK BUILD_SYNTH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deb_test: -D${var}=... is required")
  endif()
endforeach()
foreach(tool dpkg-deb dpkg-shlibdeps file)
  find_program(have_${tool} ${tool})
  if(NOT have_${tool})
    message("deb_test: SKIPPED: ${tool} is not installed")
    return()
  endif()
endforeach()

set(PACKAGE_TEST deb_test)
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
step("cpack" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR})
file(GLOB deb ${WORK_DIR}/shardsynth_*.deb)
list(LENGTH deb count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "deb_test: cpack made ${count} shardsynth_*.deb in ${WORK_DIR}, not 1")
endif()
message("deb_test: ${deb}")

step("dpkg-deb --contents" dpkg-deb --contents ${deb})
set(contents "${last_output}")
foreach(path "./usr/bin/synth\n" "./usr/bin/shard-run\n" "./usr/include/shardsynth/ir/version.hpp\n"
             "/cmake/shardsynth/shardsynthConfig.cmake\n" "/libshardsynth_synth.a\n")
  string(FIND "${contents}" "${path}" at)
  if(at LESS 0)
    message(FATAL_ERROR "deb_test: the .deb lacks ${path}:\n${contents}")
  endif()
endforeach()
if(HAVE_PYTHON AND NOT contents MATCHES "\\./usr/lib/python3/dist-packages/shardsynth/_native\\.[^ \n]*\\.so\n")
  message(FATAL_ERROR "deb_test: the .deb lacks usr/lib/python3/dist-packages/shardsynth/_native.*.so:\n${contents}")
endif()

step("dpkg-deb --field" dpkg-deb --field ${deb} Package Version Depends)
message("${last_output}")
expect_output("the .deb's control fields" "Package: shardsynth" "libz3-4" "libopenmpi3" "libspdlog" "libfmt" "zlib1g"
              "libopenblas" "openmpi-bin")
string(REGEX MATCH "Depends: [^\n]*" depends "${last_output}")
if(depends MATCHES "-dev[ ,(]|-dev$")
  message(FATAL_ERROR "deb_test: the .deb depends on a -dev package: ${depends}")
endif()

# Unpacked, not installed: the scratch root's /usr/bin/synth with the
# system's libraries only.
set(root ${WORK_DIR}/root)
step("dpkg -x" dpkg -x ${deb} ${root})
step("build synth --version" ${BUILD_SYNTH} --version)
set(build_version "${last_output}")
set(run ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH)
step("unpacked synth --version" ${run} ${root}/usr/bin/synth --version)
if(NOT last_output STREQUAL build_version OR NOT last_output MATCHES "^synth [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "deb_test: the unpacked synth --version printed '${last_output}', the build's '${build_version}'")
endif()
message("deb_test: ${last_output}")
step("unpacked shard-run --version" ${run} ${root}/usr/bin/shard-run --version)
expect_output("the unpacked shard-run --version" "shard-run ")
step("unpacked synth mlp" ${run} ${root}/usr/bin/synth mlp --cost-model slapo --mesh 8 --quiet)
expect_output("the unpacked synth mlp" "sch[\"fc2\"].sync(mode=\"fwd_post\", sync_op_or_fn=\"SR->RR\")")
if(HAVE_PYTHON)
  # Lines, not `;` (a CMake list separator).
  step("the unpacked Python module" ${run} PYTHONPATH=${root}/usr/lib/python3/dist-packages ${PYTHON} -c
       "import shardsynth\nprint(shardsynth.__file__)\nprint(shardsynth.solve(shardsynth.builtin_graph('mlp'), mesh='8', cost_model='slapo')['cost'])")
  expect_output("the unpacked Python module" "${root}/usr/lib/python3/dist-packages/shardsynth/__init__.py" "131072")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
