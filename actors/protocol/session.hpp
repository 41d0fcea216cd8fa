#pragma once
// How a peer opens its session with its node's broker. Every peer's first message is a Hello;
// the broker answers with a Welcome (or an ErrorReply). The envelope carries the protocol
// version; the broker refuses a peer of another (PMIX_ERR_NOT_SUPPORTED), naming both releases.
// Within a protocol version both ends state their release and features (compat.hpp), and the
// session uses what both have.
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/compat.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

struct Hello {
    static constexpr const char *type = "session.hello";
    std::string role = "client";  // client | tool | launcher
    std::string nspace;           // client: the job it belongs to (from its environment)
    std::uint32_t rank = 0;
    std::int64_t pid = 0;
    std::string secret;                                  // the per-job secret; required on tcp://
    std::string release{kRelease};                       // the peer's zpmix release
    std::vector<std::string> features = own_features();  // its protocol features (compat.hpp)
    ZPMIX_MSG_MAP(role, nspace, rank, pid, secret, release, features);
};

struct Welcome {
    static constexpr const char *type = "session.welcome";
    std::string broker;             // the broker's name (its host and pid)
    std::string events_uri;         // where its event publisher (XPUB) listens
    JobInfo job;                    // a client's whole job-level information, in one message
    std::uint64_t max_message = 0;  // the largest message it takes ([broker] max_message_bytes)
    std::string release{kRelease};  // the broker's zpmix release
    std::vector<std::string> features = own_features();  // its protocol features (compat.hpp)
    std::string abi = abi_level();  // the standard's ABI level it implements ("MAJOR.MINOR")
    // A tool's name as the resource manager hosting the broker gave it (its tool_connected
    // upcall); empty nspace: the name the tool gave itself stands.
    Proc tool = {};
    // The client's job is a host's (the server library): PMIx_Connect and PMIx_Disconnect go to
    // the host's upcalls (msg::HostConnect) instead of a fence.
    bool hosted = false;
    ZPMIX_MSG_MAP(broker, events_uri, job, max_message, release, features, abi, tool, hosted);
};

// server -> broker (internal): the server accepted the Hello of `peer` (a routing id). The
// broker's dispatcher records the session, then sends the peer `welcome` (an encoded Welcome
// envelope answering the Hello), so that the session exists before the peer can act on it.
struct SessionOpen {
    static constexpr const char *type = "session.open";
    std::string peer;
    std::string role;  // client | tool | launcher
    std::string nspace;
    std::uint32_t rank = 0;
    Blob welcome;
    std::string release;  // the peer's, from its Hello
    std::vector<std::string> features;
    ZPMIX_MSG_MAP(peer, role, nspace, rank, welcome, release, features);
};
inline std::size_t payload_bytes(const SessionOpen &m) {
    return m.welcome.size();
}

// dispatcher -> the actors that keep something for a peer (broadcast): the session of `peer` (a
// routing id) ended with its connection.
struct SessionClosed {
    static constexpr const char *type = "session.closed";
    std::string peer;
    ZPMIX_MSG_MAP(peer);
};

}  // namespace zpmix::msg
