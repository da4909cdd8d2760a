// PrivateDirectory: a run's own directory, 0700 under $TMPDIR, gone with its files at the end.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

namespace {

// Points TMPDIR at a fresh directory for one test case and puts it back after.
struct ScratchTmpdir {
  std::string path = (fs::temp_directory_path() / "ringlab-held-test-XXXXXX").string();
  std::string saved;
  bool had = false;
  ScratchTmpdir() {
    REQUIRE(::mkdtemp(path.data()) != nullptr);
    if (const char* old = std::getenv("TMPDIR")) had = true, saved = old;
    ::setenv("TMPDIR", path.c_str(), 1);
  }
  ~ScratchTmpdir() {
    if (had) ::setenv("TMPDIR", saved.c_str(), 1);
    else ::unsetenv("TMPDIR");
    fs::remove_all(path);
  }
};

// A child process makes a held directory and tells its path through `out`; then it either dies
// at once without removing it (as SIGKILL would leave it) or waits until the parent closes the
// pipe `hold` (whose write end the child lets go of at once).
pid_t child_with_held_directory(int out, const int* hold) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int hold_until = hold ? hold[0] : -1;
  if (hold) ::close(hold[1]);
  PrivateDirectory* dir = new PrivateDirectory("ringlab-run-child", "the run's checkpoints", "ringlab-run-");
  std::ofstream(dir->path() + "/run.ckpt") << "state";
  const std::string path = dir->path() + "\n";
  (void)!::write(out, path.data(), path.size());
  char c;
  if (hold_until >= 0) (void)!::read(hold_until, &c, 1);
  ::_exit(0);  // no destructor: the directory stays, its marker no longer held
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

}  // namespace

TEST_CASE("a held directory whose process died is removed by the next one made; a live one stays") {
  ScratchTmpdir tmp;
  int paths[2], hold[2];
  REQUIRE(::pipe(paths) == 0);
  REQUIRE(::pipe(hold) == 0);
  const pid_t alive = child_with_held_directory(paths[1], hold);
  const std::string alive_dir = read_line(paths[0]);
  const pid_t dead = child_with_held_directory(paths[1], nullptr);
  const std::string dead_dir = read_line(paths[0]);
  REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  REQUIRE(fs::exists(dead_dir + "/run.ckpt"));
  REQUIRE(fs::exists(alive_dir + "/.held"));
  fs::create_directory(tmp.path + "/ringlab-run-unheld-XXXXXX");  // made before directories were held
  fs::create_directory(tmp.path + "/ringlab-other-dir");          // not of the family

  {
    PrivateDirectory next("ringlab-run-next", "the run's checkpoints", "ringlab-run-");
    CHECK_FALSE(fs::exists(dead_dir));
    CHECK(fs::exists(alive_dir + "/run.ckpt"));
    CHECK(fs::exists(tmp.path + "/ringlab-run-unheld-XXXXXX"));
    CHECK(fs::exists(tmp.path + "/ringlab-other-dir"));
    CHECK(next.held_marker() == next.path() + "/.held");
    CHECK(fs::exists(next.held_marker()));
    CHECK(remove_abandoned_directories("ringlab-run-") == 0);  // its own marker is held too
  }
  ::close(hold[1]);  // the second child ends, as killed, leaving its directory
  REQUIRE(::waitpid(alive, nullptr, 0) == alive);
  CHECK(remove_abandoned_directories("ringlab-run-") == 1);
  CHECK_FALSE(fs::exists(alive_dir));
  CHECK(PrivateDirectory("ringlab-run-x", "what").held_marker().empty());
  for (int fd : {paths[0], paths[1], hold[0]}) ::close(fd);
}
