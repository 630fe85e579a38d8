# Installs the build tree into a scratch prefix, configures and builds
# examples/dsl/ as a separate CMake project against the installed package,
# and runs it on 8 MPI ranks. Run by ctest as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DMPIEXEC=... -P find_package_test.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR MPIEXEC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "find_package_test: -D${var}=... is required")
  endif()
endforeach()

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "find_package_test: ${what} failed (${rc}):\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file lib/cmake/shardsynth/shardsynthConfig.cmake include/shardsynth/synth/synthesizer.hpp
        include/shardsynth/synth/solver/problem.hpp include/shardsynth/synth/stages/stages.hpp
        include/shardsynth/synth/report/trace_jsonl.hpp include/shardsynth/common/error.hpp bin/synth)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "find_package_test: the install lacks ${file}")
  endif()
endforeach()
step("configuring examples/dsl" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/dsl -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step("building examples/dsl" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running dsl_example" ${MPIEXEC} --allow-run-as-root --oversubscribe -np 8 ${WORK_DIR}/build/dsl_example)
foreach(needle "# written by the user" "sch[\"fc1\"].shard(\"weight\", dim=0)" "proven optimal" "preload: the DSL schedule scores"
        "against the unsharded model: OK")
  string(FIND "${last_output}" "${needle}" at)
  if(at LESS 0)
    message(FATAL_ERROR "find_package_test: dsl_example did not print '${needle}'")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
