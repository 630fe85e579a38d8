# Installs the build tree into a scratch prefix, checks the layout, runs the
# installed synth (its --version and the README's MLP run), then configures
# and builds examples/dsl/ as a separate CMake project against the installed
# package and runs it on 8 MPI ranks. Run by ctest as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DMPIEXEC=... -DBUILD_SYNTH=...
#         [-DCXX_COMPILER=... -DCXX_FLAGS=... -DEXE_LINKER_FLAGS=... -DHAVE_PYTHON=1] -P find_package_test.cmake
# CXX_COMPILER and the flags are the build's own, so the consumer is built as
# the libraries were (clang with the sanitizers in the asan preset).
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR MPIEXEC BUILD_SYNTH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "find_package_test: -D${var}=... is required")
  endif()
endforeach()

set(PACKAGE_TEST find_package_test)
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file include/shardsynth/synth/synthesizer.hpp
        include/shardsynth/synth/solver/problem.hpp include/shardsynth/synth/stages/stages.hpp
        include/shardsynth/synth/report/trace_jsonl.hpp include/shardsynth/common/error.hpp bin/synth bin/shard-run
        include/shardsynth/ir/version.hpp include/shardsynth/runtime/executor.hpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "find_package_test: the install lacks ${file}")
  endif()
endforeach()
# lib/ or lib/<multiarch>/ (GNUInstallDirs: the latter for a /usr build).
file(GLOB config ${prefix}/lib/cmake/shardsynth/shardsynthConfig.cmake ${prefix}/lib/*/cmake/shardsynth/shardsynthConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "find_package_test: the install lacks lib/[<multiarch>/]cmake/shardsynth/shardsynthConfig.cmake")
endif()
if(HAVE_PYTHON)
  # Outside /usr, Debian's python3 reads <prefix>/lib/python3.X/dist-packages.
  file(GLOB module ${prefix}/lib/python3.*/dist-packages/shardsynth/_native.*.so)
  if(NOT module)
    message(FATAL_ERROR "find_package_test: the install lacks lib/python3.X/dist-packages/shardsynth/_native.*.so")
  endif()
endif()

# The installed commands, run as a user would: no build tree, no library path.
step("build synth --version" ${BUILD_SYNTH} --version)
set(build_version "${last_output}")
step("installed synth --version" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/synth --version)
if(NOT last_output STREQUAL build_version OR NOT last_output MATCHES "^synth [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "find_package_test: the installed synth --version printed '${last_output}', the build's '${build_version}'")
endif()
step("installed shard-run --version" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/shard-run --version)
expect_output("installed shard-run --version" "shard-run ")
step("installed synth mlp" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/synth mlp --cost-model slapo --mesh 8)
expect_output("installed synth mlp" "Cannot find better solutions" "Best solution:"
              "sch[\"fc2\"].sync(mode=\"fwd_post\", sync_op_or_fn=\"SR->RR\")")

set(consumer_flags -DCMAKE_BUILD_TYPE=Release)
if(CXX_COMPILER)
  list(APPEND consumer_flags -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CXX_FLAGS)
  list(APPEND consumer_flags "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
if(EXE_LINKER_FLAGS)
  list(APPEND consumer_flags "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
endif()
step("configuring examples/dsl" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/dsl -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} ${consumer_flags})
step("building examples/dsl" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running dsl_example" ${MPIEXEC} --allow-run-as-root --oversubscribe -np 8 ${WORK_DIR}/build/dsl_example)
expect_output("dsl_example" "# written by the user" "sch[\"fc1\"].shard(\"weight\", dim=0)" "proven optimal"
              "preload: the DSL schedule scores" "against the unsharded model: OK")
file(REMOVE_RECURSE ${WORK_DIR})
