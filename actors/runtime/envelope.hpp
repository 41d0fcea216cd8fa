#pragma once
// The one message envelope every zpmix peer and actor speaks:
//   {"v": protocol version, "t": message type, "id": request id, "from": sender, "body": payload}
// as a msgpack map, so fields a reader does not know are skipped and absent ones take defaults.
// "v" is kProtocolVersion, which releases that work together share (actors/protocol/compat.hpp):
// the broker refuses a message of another version. Events published on the XPUB say instead the
// event schema version, which monitors read (msg::kEventSchemaVersion).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <msgpack.hpp>
#include <zmq.hpp>

#include "actors/protocol/compat.hpp"
#include "actors/protocol/reader.hpp"

#include "zpmix/build_config.hpp"

namespace zpmix {

inline constexpr std::uint32_t kProtocolVersion = build::protocol_version;

// Bounds every decoder applies, so that a hostile header cannot make a peer allocate without
// limit: no container may declare more elements than the message has bytes, nor more than
// max_elements, and nesting is bounded.
struct DecodeLimits {
    std::size_t max_message = std::size_t{64} << 20;  // also ZMQ_MAXMSGSIZE on every socket
    std::size_t max_elements = std::size_t{1} << 20;  // per array or map
    std::size_t max_depth = 32;
};

// A message that is not a well-formed envelope, or whose body is not the expected type.
struct DecodeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What the transport vouches for about a message's sender (never read from the message itself):
// the kernel's credentials of an ipc:// peer, or that the peer came over tcp:// (and from where).
struct PeerCredentials {
    bool tcp = false;
    bool ipc = false;  // a peer of the broker's node-local socket: the kernel names its pid
    // 0 when unknown: tcp, an in-process sender, or an ipc peer outside the broker's pid
    // namespace (the kernel has no pid for it there), whom nothing about can be checked.
    std::int64_t pid = 0;
    std::int64_t uid = -1;
    std::string address;  // tcp: the peer's IP address, as libzmq gives it
};

// Who a peer is, as the broker accepted its Hello: the dispatcher attaches it to every later
// message of that peer (never read from the message itself).
struct PeerSession {
    // broker: another broker of the allocation, over the tree (CURVE-authenticated); its
    // messages are trusted as the broker's own actors' are.
    enum class Role { client, tool, launcher, broker };
    Role role = Role::client;
    std::string nspace;  // a client's own proc; empty for tools and launchers
    std::uint32_t rank = 0;
    msg::PeerFeatures features;  // its release and protocol features, from its Hello
    bool is_client() const { return role == Role::client; }
};

struct Envelope {
    std::uint32_t version = 0;
    std::string type;
    std::uint64_t id = 0;
    std::string from;
    std::string_view body;              // the body's msgpack bytes, read only by as<T>(); empty
                                        // when absent
    std::shared_ptr<const void> owner;  // owns the bytes body points into; none when the
                                        // envelope was decoded borrowed (decode_borrowed)
    PeerCredentials peer;               // filled in by the broker for messages from peers
    std::shared_ptr<const PeerSession> session;  // the sender's session; none from actors
    // A client over tcp: its job secret vouches for its own job only (a tool over tcp proved the
    // broker's keypair, the operator's credential there, and reads what a tool on the node does).
    bool tcp_client() const { return peer.tcp && session && session->is_client(); }
    std::size_t max_elements = DecodeLimits{}.max_elements;  // bounds the body's containers

    // The body as a message struct; throws DecodeError when it does not fit. The body is checked
    // here, as it is read: decode() only finds where it is.
    template <class T>
    T as() const {
        T value{};
        try {
            msg::Reader r(body.data(), body.size(), max_elements);
            if (!body.empty() && !r.nil()) msg::read(r, value);
            if (!r.at_end()) throw msg::ReadError("trailing bytes after the body");
        } catch (const std::exception &e) {
            throw DecodeError("bad body for '" + type + "': " + e.what());
        }
        return value;
    }
    // Copies a borrowed body, so that the envelope outlives the bytes it was decoded from.
    void own();
};

// Decodes one envelope; throws DecodeError on anything malformed, truncated or oversized.
Envelope decode(const void *data, std::size_t size, const DecodeLimits &limits = {});
inline Envelope decode(const zmq::message_t &msg, const DecodeLimits &limits = {}) {
    return decode(msg.data(), msg.size(), limits);
}
// The same, but the body points into `data`: for a message converted (as<T>()) before its bytes
// go, as a client does with what it just read, or own()ed first.
Envelope decode_borrowed(const void *data, std::size_t size, const DecodeLimits &limits = {});
// The same, but the body points into msg, which the envelope keeps: an actor's mailbox message
// is decoded without copying its payload again.
Envelope decode_in_place(std::shared_ptr<const zmq::message_t> msg,
                         const DecodeLimits &limits = {});

// Unpacks a bounded msgpack object (for payloads nested as bytes, e.g. cached data blobs). With
// `borrow`, strings and byte arrays point into `data`, which must outlive the handle.
msgpack::object_handle unpack_bounded(const char *data, std::size_t size,
                                      const DecodeLimits &limits = {}, bool borrow = false);

// How many payload bytes a message carries beyond its small fields, so that encoding it grows
// its buffer once. Messages with blobs overload it (found by argument-dependent lookup).
template <class Body>
constexpr std::size_t payload_bytes(const Body &) {
    return 0;
}

// A growable byte buffer for msgpack::packer. msgpack-c's sbuffer makes an out-of-line call for
// every value packed, a third of the cost of encoding a small message; this write() inlines to a
// bounds check and a copy of a known size.
class PackBuffer {
  public:
    explicit PackBuffer(std::size_t capacity);
    PackBuffer(const PackBuffer &) = delete;
    PackBuffer &operator=(const PackBuffer &) = delete;
    ~PackBuffer() { std::free(data_); }

    [[gnu::always_inline]] void write(const char *bytes, std::size_t n) {
        if (n > capacity_ - size_) grow(n);
        std::memcpy(data_ + size_, bytes, n);
        size_ += n;
    }
    const char *data() const { return data_; }
    std::size_t size() const { return size_; }
    // Hands the bytes (malloc'ed) to a ZeroMQ message that frees them.
    zmq::message_t to_message() &&;

  private:
    void grow(std::size_t n);
    char *data_;
    std::size_t size_ = 0;
    std::size_t capacity_;
};

namespace detail {
void pack_header(msgpack::packer<PackBuffer> &pk, std::uint32_t version, std::string_view type,
                 std::uint64_t id, std::string_view from);
}  // namespace detail

// Encodes one envelope of the given "v" into a ZeroMQ message without copying the packed bytes.
template <class Body>
zmq::message_t encode_versioned(std::uint32_t version, std::string_view type, std::uint64_t id,
                                const Body &body, std::string_view from = {}) {
    PackBuffer buf(256 + payload_bytes(body));
    msgpack::packer<PackBuffer> pk(buf);
    detail::pack_header(pk, version, type, id, from);
    pk.pack(body);
    return std::move(buf).to_message();
}

// The same, of this protocol's version: what every peer and actor sends.
template <class Body>
zmq::message_t encode(std::string_view type, std::uint64_t id, const Body &body,
                      std::string_view from = {}) {
    return encode_versioned(kProtocolVersion, type, id, body, from);
}

}  // namespace zpmix
