#pragma once
// Finding a free TCP port for the rendezvous store or the event server.
#include <cstdint>
#include <string>

namespace ringlab {

// Binds a TCP socket to `host` (an address such as "127.0.0.1" or "::1", or a name such as
// "localhost") on port 0, reads back the port the kernel chose, and closes the socket.
// Another process may take the port before the caller binds it: callers that can should
// bind port 0 themselves and publish the port they got. Throws Error naming the host.
uint16_t pick_free_port(const std::string& host = "127.0.0.1");

}  // namespace ringlab
