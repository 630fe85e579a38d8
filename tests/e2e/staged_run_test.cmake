# One pipeline-staged end-to-end case: stage_cut writes a staged schedule,
# shard-run executes it under mpirun with --check, and the run must pass with
# one "OK" line per micro-batch, no FAILED and no MISMATCH. With
# CUT_ARGS=plan, shard-run plans the stages itself and PLAN_ARGS ("--mesh 4x2
# --stages 4") follow the model, as in the issue's command. Run by ctest as
#   cmake -DSTAGE_CUT=... -DSHARD_RUN=... -DMPIEXEC=... -DRANKS=8 -DMICRO_BATCHES=4
#         -DCUT_ARGS="--mesh 4x2 --stages 4" -DMODEL="gpt2 --layers 2 ..." -DWORK_DIR=... -P staged_run_test.cmake
foreach(var STAGE_CUT SHARD_RUN MPIEXEC RANKS MICRO_BATCHES CUT_ARGS MODEL WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "staged_run_test: -D${var}=... is required")
  endif()
endforeach()
separate_arguments(cut_args UNIX_COMMAND "${CUT_ARGS}")
separate_arguments(model UNIX_COMMAND "${MODEL}")
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(schedule ${WORK_DIR}/staged.json)

if(CUT_ARGS STREQUAL "plan")
  separate_arguments(plan_args UNIX_COMMAND "${PLAN_ARGS}")
  set(run_args ${model} ${plan_args} --micro-batches ${MICRO_BATCHES} --check)
else()
  execute_process(COMMAND ${STAGE_CUT} ${cut_args} --out ${schedule} ${model}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "staged_run_test: stage_cut failed (${rc}):\n${err}")
  endif()
  set(run_args --schedule ${schedule} --micro-batches ${MICRO_BATCHES} --check ${model})
endif()

if(NOT DEFINED RUN_TIMEOUT)
  set(RUN_TIMEOUT 300)  # seconds shard-run may take
endif()
execute_process(COMMAND timeout ${RUN_TIMEOUT} ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${RANKS} ${SHARD_RUN} ${run_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "staged_run_test: shard-run failed (${rc}):\n${err}")
endif()
string(REGEX MATCHALL "\\): OK\n" oks "${out}")
list(LENGTH oks ok_count)
if(NOT ok_count EQUAL MICRO_BATCHES)
  message(FATAL_ERROR "staged_run_test: ${ok_count} checks passed, expected ${MICRO_BATCHES}")
endif()
if(out MATCHES "FAILED|MISMATCH")
  message(FATAL_ERROR "staged_run_test: a check failed or bytes differ from the cost model")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
