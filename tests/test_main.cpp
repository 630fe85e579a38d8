// The doctest main of every suite. It also gives each test process its own
// Open MPI session folder: ctest runs tests two at a time, and two mpirun
// launches that start together can race to create the shared
// /tmp/ompi.<host>.<uid> folder ("A call to mkdir was unable to create the
// desired directory ... File exists", seen once in the sanitized suite).
// Processes that mpirun started (OMPI_COMM_WORLD_SIZE is set) keep their
// launcher's folder.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

int main(int argc, char** argv) {
  std::string session_base;
  if (std::getenv("OMPI_MCA_orte_tmpdir_base") == nullptr && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    char pattern[] = "/tmp/shardsynth_test_ompi_XXXXXX";
    if (mkdtemp(pattern) != nullptr) {
      session_base = pattern;
      setenv("OMPI_MCA_orte_tmpdir_base", pattern, 1);
    }
  }
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (!session_base.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(session_base, ignored);
  }
  return rc;
}
