#pragma once
// Files the user names as input (scenarios, checkpoints, bench and trace files, run reports) are
// read whole through one function, which refuses anything that is not a regular file of a sane
// size before reading a byte: a FIFO would block the open for ever, /dev/zero would be read
// until memory runs out, and a directory reads as an obscure stream error.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ringlab {

// The whole file at `path`. Throws InputError "WHAT PATH: REASON" when it cannot be opened or
// read, is not a regular file, or holds more than `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes);

// A whole file's text as one JSON value, stricter than nlohmann::json::parse, which keeps the
// last of two equal keys ({"world_size": 2, "world_size": 64} is 64 ranks) and stops at a NUL
// byte as if the text ended there. Throws InputError "ORIGIN: ..." for invalid JSON, a key given
// twice in one object (naming it: 'job.world_size'), or bytes after the value (with the offset).
nlohmann::json parse_json_input(const std::string& text, const std::string& origin);

}  // namespace ringlab
