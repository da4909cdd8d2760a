#include "engine/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <iterator>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"

namespace ringlab {
namespace {

// nlohmann's parse error quotes the bytes it last read ("last read: '...'"): from a file of
// random or binary bytes those are not text, and a terminal shows them as garbage (or takes
// them for its own control codes). Bytes that are neither printable ASCII nor part of a valid
// UTF-8 character are written as \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool valid = length > 1 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (length == 1 && c >= 0x20 && c != 0x7F) {
      out += text[i++];
    } else if (valid) {
      out.append(text, i, length);
      i += length;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  return out;
}


// "1 MiB", "2 GiB": the limits are whole binary units.
std::string describe_limit(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

// Reads exactly `out.size()` bytes; the size was taken from fstat a moment before.
void read_exactly(int fd, std::string& out, const std::function<InputError(const std::string&)>& bad) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw bad(fmt::format("cannot read ({})", std::strerror(errno)));
    if (n == 0) throw bad("the file shrank while it was read");
    done += static_cast<size_t>(n);
  }
}

// Builds the document as nlohmann's own parser does, but refuses a key the object being built
// already has (nlohmann keeps the last), and notes where the top-level value ended.
class StrictDocument : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  StrictDocument(const std::string& origin, const char* const& read_up_to, const char* begin)
      : origin_(origin), read_up_to_(read_up_to), begin_(begin) {}

  json root;
  size_t value_end = std::string::npos;  // offset just past the top-level value, once complete
  std::string error;                     // nlohmann's message when the text is not valid JSON

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t& v) override { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    json& object = *open_.back();
    if (object.contains(key))
      throw InputError(fmt::format("{}: field '{}' is given twice (the second would silently replace the first)",
                                   origin_, path_with(key)));
    key_ = &object[key];
    names_.back().key = key;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) override {
    error = printable(json_error_words(e));
    return false;
  }

 private:
  struct Name {  // where an open object or array sits in its parent, and its current key
    std::string in_parent, key;
  };

  json* place(json value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    *key_ = std::move(value);
    return key_;
  }
  bool add(json value) {
    // A number is known to end only once the byte after it has been read.
    const bool top_number = open_.empty() && value.is_number();
    place(std::move(value));
    if (open_.empty()) value_end = static_cast<size_t>(read_up_to_ - begin_) - (top_number ? 1 : 0);
    return true;
  }
  bool open(json value) {
    std::string in_parent;
    if (!open_.empty())
      in_parent = open_.back()->is_array() ? fmt::format("[{}]", open_.back()->size()) : "." + names_.back().key;
    open_.push_back(place(std::move(value)));
    names_.push_back({std::move(in_parent), ""});
    return true;
  }
  bool close() {
    open_.pop_back();
    names_.pop_back();
    if (open_.empty()) value_end = static_cast<size_t>(read_up_to_ - begin_);
    return true;
  }
  // "sequence[1].lr": the open containers' names, then `key`.
  std::string path_with(const std::string& key) const {
    std::string path;
    for (const Name& n : names_) path += n.in_parent;
    path += "." + key;
    return path[0] == '.' ? path.substr(1) : path;  // "[0].x" has no dot to drop
  }

  const std::string& origin_;
  const char* const& read_up_to_;
  const char* begin_;
  std::vector<json*> open_;
  std::vector<Name> names_;
  json* key_ = nullptr;
};

// Hands nlohmann the text byte by byte and remembers how far it has read: where the value ended.
struct CountingIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* at;
  const char** furthest;
  reference operator*() const { return *at; }
  CountingIterator& operator++() {
    *furthest = ++at;
    return *this;
  }
  bool operator==(const CountingIterator& other) const { return at == other.at; }
  bool operator!=(const CountingIterator& other) const { return at != other.at; }
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  const auto bad = [&](const std::string& why) { return InputError(fmt::format("{} {}: {}", what, path, why)); };
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw bad(fmt::format("cannot open ({})", std::strerror(errno)));
  std::string bytes;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw bad(fmt::format("cannot stat ({})", std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) throw bad("not a regular file (a directory, device or pipe)");
    if (static_cast<uint64_t>(st.st_size) > max_bytes)
      throw bad(fmt::format("{} bytes, more than the {} a {} may have", st.st_size, describe_limit(max_bytes), what));
    bytes.resize(static_cast<size_t>(st.st_size));
    read_exactly(fd, bytes, bad);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& origin) {
  const char* read_up_to = text.data();
  StrictDocument doc(origin, read_up_to, text.data());
  nlohmann::json::sax_parse(CountingIterator{text.data(), &read_up_to},
                            CountingIterator{text.data() + text.size(), &read_up_to}, &doc);
  // After a complete value only white space may follow; nlohmann stops at a NUL byte instead,
  // and calls anything else invalid without saying that the value itself was fine.
  const size_t extra = doc.value_end == std::string::npos ? std::string::npos
                                                          : text.find_first_not_of(" \t\n\r", doc.value_end);
  if (extra != std::string::npos)
    throw InputError(fmt::format("{}: {} unexpected byte{} after the JSON value, from offset {} (a file holds one value)",
                                 origin, text.size() - extra, text.size() - extra == 1 ? "" : "s", extra));
  if (!doc.error.empty()) throw InputError(fmt::format("{}: not valid JSON: {}", origin, doc.error));
  return std::move(doc.root);
}

}  // namespace ringlab
