#pragma once
// Little-endian byte encoding shared by ringlab's wire protocols (the store, the event stream).
// Every field is written explicitly, byte by byte in little-endian order, so the format does not
// depend on the compiler's struct layout or the host's byte order. The Reader checks every read
// against the bytes it was given and throws Error instead of reading past the end: it is what
// stands between a socket and the rest of the program.
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::wire {

// Appends fields to a byte vector. Reserve the vector first when encoding in a hot loop.
class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { put_unsigned(v); }
  void u32(uint32_t v) { put_unsigned(v); }
  void u64(uint64_t v) { put_unsigned(v); }
  void i8(int8_t v) { u8(static_cast<uint8_t>(v)); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }

  void raw(const void* data, size_t size) {
    if (size == 0) return;
    const size_t at = out_.size();
    out_.resize(at + size);
    std::memcpy(out_.data() + at, data, size);
  }
  // A u32 length, then the bytes.
  void string(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void bytes(std::span<const uint8_t> b) {
    u32(static_cast<uint32_t>(b.size()));
    raw(b.data(), b.size());
  }
  // Arrays of numbers: element by element in little-endian order (a single copy on
  // little-endian hosts, which is all of ringlab's targets, but correct everywhere).
  template <class T>
  void array(std::span<const T> items) {
    static_assert(std::is_arithmetic_v<T>);
    if constexpr (std::endian::native == std::endian::little) {
      raw(items.data(), items.size_bytes());
    } else {
      for (T item : items) put_unsigned(to_bits(item));
    }
  }

 private:
  template <class T>
  static auto to_bits(T v) {
    if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(v);
    else if constexpr (sizeof(T) == 8) return std::bit_cast<uint64_t>(v);
    else if constexpr (sizeof(T) == 2) return std::bit_cast<uint16_t>(v);
    else return std::bit_cast<uint8_t>(v);
  }
  template <class U>
  void put_unsigned(U v) {
    static_assert(std::is_unsigned_v<U>);
    const size_t at = out_.size();
    out_.resize(at + sizeof(U));
    for (size_t i = 0; i < sizeof(U); ++i) out_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }

  std::vector<uint8_t>& out_;
};

// Reads fields from a byte span; every read is bounds-checked. `what` names the message in errors
// ("event", "store request").
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const char* what) : bytes_(bytes), what_(what) {}

  uint8_t u8() { return *take(1); }
  uint16_t u16() { return get_unsigned<uint16_t>(); }
  uint32_t u32() { return get_unsigned<uint32_t>(); }
  uint64_t u64() { return get_unsigned<uint64_t>(); }
  int8_t i8() { return static_cast<int8_t>(u8()); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  float f32() { return std::bit_cast<float>(u32()); }
  double f64() { return std::bit_cast<double>(u64()); }

  std::span<const uint8_t> raw(size_t size) {
    const uint8_t* p = take(size);
    return {p, size};
  }
  // A u32 length (at most `max_size`), then that many bytes.
  std::string string(size_t max_size, const char* field) {
    const size_t size = length(max_size, 1, field);
    const uint8_t* p = take(size);
    return std::string(reinterpret_cast<const char*>(p), size);
  }
  std::vector<uint8_t> bytes(size_t max_size, const char* field) {
    const size_t size = length(max_size, 1, field);
    const uint8_t* p = take(size);
    return std::vector<uint8_t>(p, p + size);
  }
  // A u32 element count (at most `max_count`), then the elements.
  template <class T>
  std::vector<T> array(size_t max_count, const char* field) {
    static_assert(std::is_arithmetic_v<T>);
    const size_t count = length(max_count, sizeof(T), field);
    const uint8_t* p = take(count * sizeof(T));
    std::vector<T> items(count);
    if constexpr (std::endian::native == std::endian::little) {
      if (count > 0) std::memcpy(items.data(), p, count * sizeof(T));
    } else {
      Reader inner({p, count * sizeof(T)}, what_);
      for (T& item : items) item = inner.template get_value<T>();
    }
    return items;
  }

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }
  void expect_end() const {
    if (remaining() != 0)
      throw Error(fmt::format("{}: {} unexpected bytes after the last field", what_, remaining()));
  }

 private:
  // Reads a u32 count and checks it against the limit and against the bytes that are left,
  // before anything is allocated: a forged count can neither overflow nor over-allocate.
  size_t length(size_t max_count, size_t element_size, const char* field) {
    const uint32_t count = u32();
    if (count > max_count)
      throw Error(fmt::format("{}: {} has {} elements, more than the limit of {}", what_, field,
                              count, max_count));
    if (static_cast<uint64_t>(count) * element_size > remaining())
      throw Error(fmt::format("{} truncated: {} announces {} elements but only {} bytes are left",
                              what_, field, count, remaining()));
    return count;
  }
  const uint8_t* take(size_t size) {
    if (size > remaining())
      throw Error(fmt::format("{} truncated: needs {} bytes at offset {}, only {} left", what_,
                              size, pos_, remaining()));
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += size;
    return p;
  }
  template <class U>
  U get_unsigned() {
    const uint8_t* p = take(sizeof(U));
    U v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v |= static_cast<U>(static_cast<U>(p[i]) << (8 * i));
    return v;
  }
  template <class T>
  T get_value() {
    if constexpr (sizeof(T) == 8) return std::bit_cast<T>(get_unsigned<uint64_t>());
    else if constexpr (sizeof(T) == 4) return std::bit_cast<T>(get_unsigned<uint32_t>());
    else if constexpr (sizeof(T) == 2) return std::bit_cast<T>(get_unsigned<uint16_t>());
    else return std::bit_cast<T>(get_unsigned<uint8_t>());
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  const char* what_;
};

}  // namespace ringlab::wire
