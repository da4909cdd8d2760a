// read_input_file: a regular file of a sane size is read whole; anything else is refused before a
// byte is read, naming the file and the reason.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/input_file.h"

using namespace ringlab;
namespace fs = std::filesystem;

TEST_CASE("a regular file is read whole; devices, pipes, directories and oversized files are refused") {
  std::string dir = (fs::temp_directory_path() / "ringlab-input-test-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string file = dir + "/s.json", fifo = dir + "/fifo";
  const std::string text = std::string("{\"a\": 1}\n") + std::string(1000, ' ');
  std::ofstream(file, std::ios::binary) << text;
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

  CHECK(read_input_file(file, "scenario", 1 << 20) == text);
  CHECK_THROWS_WITH_AS(read_input_file(file, "scenario", 1000),
                       ("scenario " + file + ": 1009 bytes, more than the 1000 bytes a scenario may have").c_str(),
                       InputError);
  CHECK_THROWS_WITH_AS(read_input_file(file, "scenario", 0), doctest::Contains("more than the 0 bytes"), InputError);
  // Neither blocks: a FIFO nobody writes, and a device that never ends.
  CHECK_THROWS_WITH_AS(read_input_file(fifo, "trace file", 1 << 20),
                       ("trace file " + fifo + ": not a regular file (a directory, device or pipe)").c_str(), InputError);
  CHECK_THROWS_WITH_AS(read_input_file("/dev/zero", "bench file", 1 << 20),
                       "bench file /dev/zero: not a regular file (a directory, device or pipe)", InputError);
  CHECK_THROWS_WITH_AS(read_input_file(dir, "checkpoint", 1 << 20), doctest::Contains("not a regular file"), InputError);
  CHECK_THROWS_WITH_AS(read_input_file(dir + "/missing", "checkpoint", 1 << 20),
                       ("checkpoint " + dir + "/missing: cannot open (No such file or directory)").c_str(), InputError);
  fs::remove_all(dir);
}
