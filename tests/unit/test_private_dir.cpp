// PrivateDirectory: a run's own directory, 0700 under $TMPDIR, gone with its files at the end.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/private_dir.h"

using namespace ringlab;
namespace fs = std::filesystem;

TEST_CASE("a private directory is made 0700 under TMPDIR and removed with everything in it") {
  std::string tmpdir = (fs::temp_directory_path() / "ringlab-private-test-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpdir.data()) != nullptr);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  {
    PrivateDirectory dir("ringlab-run-abc", "the run's checkpoints");
    CHECK(fs::path(dir.path()).parent_path() == fs::path(tmpdir));
    CHECK(fs::path(dir.path()).filename().string().rfind("ringlab-run-abc-", 0) == 0);
    struct stat st {};
    REQUIRE(::stat(dir.path().c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    std::ofstream(dir.path() + "/run.ckpt") << "state";
    fs::create_directory(dir.path() + "/nested");
    dir.remove();
    CHECK_FALSE(fs::exists(dir.path()));
    dir.remove();  // a second time does nothing
  }
  {
    PrivateDirectory dropped("ringlab-run-def", "the run's checkpoints");
    std::ofstream(dropped.path() + "/run.ckpt.epoch") << "state";
  }
  CHECK(fs::is_empty(tmpdir));  // the destructor removed the second one

  ::setenv("TMPDIR", "/proc", 1);  // a directory nothing can be created in
  CHECK_THROWS_WITH_AS(PrivateDirectory("ringlab-run-x", "the run's checkpoints"),
                       doctest::Contains("the run's checkpoints: cannot create a private directory in /proc"), Error);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
  fs::remove_all(tmpdir);
}
