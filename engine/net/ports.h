#pragma once
// Finding a free TCP port for the rendezvous store or the event server.
#include <cstdint>
#include <string>
#include <vector>

namespace ringlab {

// Binds a TCP socket to `host` (an address such as "127.0.0.1" or "::1", or a name such as
// "localhost") on port 0, reads back the port the kernel chose, and closes the socket.
// Another process may take the port before the caller binds it: callers that can should
// bind port 0 themselves and publish the port they got. Throws Error naming the host.
uint16_t pick_free_port(const std::string& host = "127.0.0.1");

// A free port for a child process to bind seconds from now (a PyTorch script's MASTER_PORT, bound
// after its imports): one below the kernel's ephemeral range, which every outgoing connection on
// the machine draws from, so that none of those takes it meanwhile (on a busy machine one did:
// "Address already in use"); the kernel's choice, as pick_free_port, when none is found there.
uint16_t pick_port_for_a_child(const std::string& host = "127.0.0.1");

// This machine's interface addresses a server listening on `host` can be reached at, as
// "10.0.0.5 (eth0)", when `host` is a wildcard address (0.0.0.0: every IPv4 address; ::, which
// takes IPv4 too: every address); empty for any other host.
std::vector<std::string> wildcard_listen_addresses(const std::string& host);
// The warning `ringlab run` prints once when its store and event server would listen on every
// interface: where they can be reached, and that the run's token is their only guard. "" when
// `master_addr` is not a wildcard.
std::string exposure_warning(const std::string& master_addr);

}  // namespace ringlab
