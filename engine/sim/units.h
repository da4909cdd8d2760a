#pragma once
// Reading and printing the quantities the simulator talks about: sizes with K/M/G suffixes
// (powers of 1024, as nccl-tests reads them), times from nanoseconds to seconds.
#include <cstdint>
#include <string>

namespace ringlab::sim {

// "4096", "64K", "16M", "1G", "1.5M", "64MiB", "64MB" (all binary: K = 1024). Throws InputError
// naming `what` and the text unless the result is a whole number of bytes > 0.
int64_t parse_byte_size(const std::string& text, const std::string& what = "size");

std::string format_bytes(double bytes);      // "2.7 KiB", "64 MiB"
std::string format_seconds(double seconds);  // "850 ns", "12.3 us", "4.56 ms", "1.23 s"

}  // namespace ringlab::sim
