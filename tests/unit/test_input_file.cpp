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

#include <nlohmann/json.hpp>

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

TEST_CASE("parse_json_input: one JSON value, every key once, nothing after it") {
  CHECK(parse_json_input("{\"a\": [1, {\"b\": 2}], \"c\": 1.5}\n\t ", "f") ==
        nlohmann::json{{"a", {1, {{"b", 2}}}}, {"c", 1.5}});
  CHECK(parse_json_input(" 42 ", "f") == 42);
  // A key given twice is named with where it is.
  CHECK_THROWS_WITH_AS(parse_json_input(R"({"job": {"world_size": 2, "world_size": 64}})", "scenario s.json"),
                       "scenario s.json: field 'job.world_size' is given twice (the second would silently replace "
                       "the first)", InputError);
  CHECK_THROWS_WITH_AS(parse_json_input(R"({"sequence": [{}, {"lr": 1, "lr": 2}]})", "f"),
                       doctest::Contains("field 'sequence[1].lr' is given twice"), InputError);
  CHECK_THROWS_WITH_AS(parse_json_input(R"([{"a": 1, "a": 1}])", "f"), doctest::Contains("field '[0].a'"), InputError);
  // Equal keys in different objects are fine.
  CHECK_NOTHROW(parse_json_input(R"({"a": {"x": 1}, "b": {"x": 1}})", "f"));
  // Bytes after the value, with the offset of the first: text, a second value, a NUL byte.
  CHECK_THROWS_WITH_AS(parse_json_input("{\"a\": 1} xyz", "f"),
                       "f: 3 unexpected bytes after the JSON value, from offset 9 (a file holds one value)", InputError);
  CHECK_THROWS_WITH_AS(parse_json_input("{}{}", "f"), doctest::Contains("2 unexpected bytes after the JSON value, from offset 2"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json_input(std::string("{}\0rest", 7), "f"),
                       doctest::Contains("5 unexpected bytes after the JSON value, from offset 2"), InputError);
  CHECK_THROWS_WITH_AS(parse_json_input("5x", "f"), doctest::Contains("1 unexpected byte after the JSON value, from offset 1"),
                       InputError);
  // Not JSON at all: nlohmann's own message.
  CHECK_THROWS_WITH_AS(parse_json_input("{\"a\": ", "f"), doctest::Contains("f: not valid JSON: parse error at line 1"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json_input("", "f"), doctest::Contains("f: not valid JSON"), InputError);
  // Random bytes: the ones it quotes that are no text come out as \xNN, a UTF-8 character as itself.
  CHECK_THROWS_WITH_AS(parse_json_input("\xa4\xff", "f"), doctest::Contains("last read: '\\xa4'"), InputError);
  CHECK_THROWS_WITH_AS(parse_json_input("{\"\xc3\xa9\": \xa4}", "f"), doctest::Contains("\xc3\xa9\": \\xa4"), InputError);
}
