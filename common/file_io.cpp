#include "common/file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>
#include <zlib.h>

#include "common/error.hpp"

namespace shardsynth::common {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
    out << content;
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError("cannot write '" + path + "': write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw InputError("cannot write '" + path + "': " + ec.message());
  }
}

void check_writable(const std::string& path) {
  const std::string probe = path + ".probe." + std::to_string(::getpid());
  std::FILE* file = std::fopen(probe.c_str(), "wb");
  if (file == nullptr) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
  std::fclose(file);
  std::remove(probe.c_str());
  if (std::filesystem::is_directory(path)) throw InputError("cannot write '" + path + "': it is a directory");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  if (std::filesystem::is_directory(path)) throw InputError("cannot read '" + path + "': it is a directory");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string read_file_gz(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  std::string content;
  char buffer[1 << 16];
  for (;;) {
    const int got = gzread(file, buffer, sizeof buffer);
    if (got < 0) {
      int code = 0;
      const std::string message = gzerror(file, &code);
      gzclose(file);
      throw InputError("cannot read '" + path + "': " + message);
    }
    if (got == 0) break;
    content.append(buffer, static_cast<std::size_t>(got));
  }
  gzclose(file);
  return content;
}

}  // namespace shardsynth::common
