#pragma once
// SHARDSYNTH_MPI_CHECK(call): runs an MPI call and, when it does not return
// MPI_SUCCESS, prints file:line, the call and MPI's error string to stderr and
// aborts every rank (MPI_Abort on MPI_COMM_WORLD). Communicators must use
// MPI_ERRORS_RETURN for the check to see errors (MpiCommunicator sets it).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace shardsynth::runtime {

[[noreturn]] inline void mpi_check_failed(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "unknown MPI error %d", code);
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, text);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code == 0 ? 1 : code);
  std::abort();  // MPI_Abort does not return; satisfies [[noreturn]]
}

}  // namespace shardsynth::runtime

#define SHARDSYNTH_MPI_CHECK(call)                                                                \
  do {                                                                                            \
    const int shardsynth_mpi_code_ = (call);                                                      \
    if (shardsynth_mpi_code_ != MPI_SUCCESS) {                                                    \
      ::shardsynth::runtime::mpi_check_failed(shardsynth_mpi_code_, #call, __FILE__, __LINE__);   \
    }                                                                                             \
  } while (false)
