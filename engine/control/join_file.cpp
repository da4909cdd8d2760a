#include "engine/control/join_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/output_file.h"

namespace ringlab {

void write_join_file(const std::string& path, const JoinInfo& info) {
  const nlohmann::json j = {{"master_addr", info.master_addr}, {"master_port", info.master_port},
                            {"nnodes", info.nnodes},           {"nproc_per_node", info.nproc_per_node},
                            {"run_id", info.run_id},           {"token", info.token}};
  OutputFile out(path, "--join-file", mode_t{0600});
  out.stream() << j.dump(1) << "\n";
  out.commit();
}

namespace {

struct stat join_file_status(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(fmt::format("--join-file {}: no such file (node 0 writes it when started with --join-file)", path));
  if (!S_ISREG(st.st_mode))
    throw InputError(fmt::format("--join-file {}: not a join file ({}): give the file node 0 wrote", path,
                                 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  return st;
}

nlohmann::json parse_join_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw InputError(fmt::format("--join-file {}: cannot be read", path));
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("--join-file {}: not a join file ({})", path, json_error_words(e)));
  }
}

// A join file holds the run's token: one that others can read is refused, once it is known to be
// one (the advice to chmod a file that is not one, or is someone else's, would be wrong).
void refuse_readable_by_others(const std::string& path, const struct stat& st) {
  if ((st.st_mode & 077) == 0) return;
  const std::string fix = st.st_uid == ::geteuid() ? fmt::format("`chmod 600 {}`", path)
                                                   : std::string("ask its owner to make it readable by them alone");
  throw InputError(fmt::format("--join-file {}: others can read it (mode {:o}) and it holds the run's token; {}",
                               path, st.st_mode & 0777, fix));
}

template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& path) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("--join-file {}: '{}' is missing or of the wrong type", path, key));
  }
}

}  // namespace

JoinInfo read_join_file(const std::string& path) {
  const struct stat st = join_file_status(path);
  const nlohmann::json j = parse_join_json(path);
  if (!j.is_object()) throw InputError(fmt::format("--join-file {}: not a join file (not a JSON object)", path));
  JoinInfo info;
  info.master_addr = field<std::string>(j, "master_addr", path);
  const int port = field<int>(j, "master_port", path);
  if (port < 1 || port > 65535) throw InputError(fmt::format("--join-file {}: master_port {} is not a port", path, port));
  info.master_port = static_cast<uint16_t>(port);
  info.nnodes = field<int>(j, "nnodes", path);
  info.nproc_per_node = field<int>(j, "nproc_per_node", path);
  info.run_id = field<std::string>(j, "run_id", path);
  info.token = field<std::string>(j, "token", path);
  if (info.token.empty()) throw InputError(fmt::format("--join-file {}: the token is empty", path));
  refuse_readable_by_others(path, st);
  return info;
}

std::string join_command(const JoinInfo& info, const std::string& join_file) {
  if (!join_file.empty()) return fmt::format("ringlab run --join-file {} --node-rank K", join_file);
  return fmt::format("RINGLAB_TOKEN=<the token> ringlab run --nnodes {} --nproc-per-node {} --node-rank K "
                     "--master-addr {} --master-port {} --run-id {}",
                     info.nnodes, info.nproc_per_node, info.master_addr, info.master_port, info.run_id);
}

}  // namespace ringlab
