#pragma once
// The modex: what a process committed (PMIx_Put + PMIx_Commit), direct-modex Get for keys of
// processes that did not take part in a collecting fence, and publish/lookup/unpublish.
//
// A data blob is the msgpack bytes of a map key -> [type, payload] (the C binding's value codec),
// kept opaque by the broker so that it never decodes values it only stores and forwards.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// Client -> modex: everything the client has put so far, by scope (each commit replaces the last).
struct Commit {
    static constexpr const char *type = "modex.commit";
    Proc proc;
    Blob local;   // PMIX_LOCAL: for processes on the same node
    Blob remote;  // PMIX_REMOTE: for processes on other nodes
    Blob global;  // PMIX_GLOBAL: for everyone
    ZPMIX_MSG_MAP(proc, local, remote, global);
};
inline const Proc *acting_proc(const Commit &m) {
    return &m.proc;
}

// One process's committed data as one reader sees it: local+global when the reader is on the
// owner's node, remote+global when it is not. scopes[i] is the PMIx scope (PMIX_LOCAL,
// PMIX_REMOTE, PMIX_GLOBAL) blobs[i] was put with, so that a Get naming PMIX_DATA_SCOPE can tell.
struct ProcData {
    Proc proc;
    std::vector<Blob> blobs;
    std::vector<std::uint8_t> scopes;
    ZPMIX_MSG_MAP(proc, blobs, scopes);
};

// Client -> modex: direct modex. Answered by ModexData once `proc` has committed data holding
// `key` for the reader's node (all of that data, so the client caches it), or an ErrorReply:
// PMIX_ERR_TIMEOUT after timeout_ms (0 = wait until the owner exits), PMIX_ERR_NOT_FOUND when the
// owner committed without the key (or only in a scope that is not for the reader's node) or exited
// without committing it, PMIX_ERR_UNREACH when the owner's broker is lost. `reader` is the
// caller (empty: a process on the broker's node). An owner on another broker's node is asked of
// that broker's modex, which answers as for a reader on another node. An empty
// key asks for whatever was committed. `commits`: the answer waits for at least that many of the
// owner's commits (a reader that saw them counted on the job's fence board).
struct ModexGet {
    static constexpr const char *type = "modex.get";
    Proc proc;
    std::string key;
    std::uint32_t timeout_ms = 0;
    Proc reader;
    std::uint32_t commits = 0;
    // Answer from what the broker holds, PMIX_ERR_NOT_FOUND otherwise: never wait for the data or
    // ask the host or another broker for it (the server library's host's own Get).
    bool held_only = false;
    ZPMIX_MSG_MAP(proc, key, timeout_ms, reader, commits, held_only);
};
struct ModexData {
    static constexpr const char *type = "modex.data";
    ProcData data;
    ZPMIX_MSG_MAP(data);
};

// fence -> modex: the committed data of these processes (wildcards allowed), for a collecting
// fence, as this node's readers see it; with `remote`, as a reader on another node sees it (this
// node's part of a fence over several nodes). Answered by ModexCollected with the same request id.
struct ModexCollect {
    static constexpr const char *type = "modex.collect";
    std::vector<Proc> procs;
    bool remote = false;
    ZPMIX_MSG_MAP(procs, remote);
};
struct ModexCollected {
    static constexpr const char *type = "modex.collected";
    std::vector<ProcData> data;
    ZPMIX_MSG_MAP(data);
};

// Encoding sizes (envelope.hpp's payload_bytes): the blobs, and a little for each one's framing.
inline std::size_t payload_bytes(const Commit &m) {
    return m.local.size() + m.remote.size() + m.global.size() + 16;
}
inline std::size_t payload_bytes(const ProcData &d) {
    std::size_t n = d.proc.nspace.size() + 48;
    for (const auto &b : d.blobs) n += b.size() + 6;
    return n;
}
inline std::size_t payload_bytes(const ModexData &m) {
    return payload_bytes(m.data);
}
inline std::size_t payload_bytes(const ModexCollected &m) {
    std::size_t n = 0;
    for (const auto &d : m.data) n += payload_bytes(d);
    return n;
}

// PMIx_Publish: `data` is a blob (key -> [type, payload]). range/persistence are the PMIx values.
// Answered by Ok, or an ErrorReply PMIX_ERR_DUPLICATE_KEY when a key is already published in an
// overlapping range.
struct Publish {
    static constexpr const char *type = "modex.publish";
    Proc proc;
    std::uint8_t range = 0;  // pmix_data_range_t
    std::uint8_t persistence = 0;
    Blob data;
    ZPMIX_MSG_MAP(proc, range, persistence, data);
};
inline const Proc *acting_proc(const Publish &m) {
    return &m.proc;
}

// PMIx_Lookup: answered by LookupReply with the keys found (each with its publisher); with
// wait, only once every key is there (or PMIX_ERR_TIMEOUT after timeout_ms, 0 = no limit);
// without wait, PMIX_ERR_NOT_FOUND when none is there.
struct Lookup {
    static constexpr const char *type = "modex.lookup";
    Proc proc;
    std::uint8_t range = 0;
    std::vector<std::string> keys;
    bool wait = false;
    std::uint32_t timeout_ms = 0;
    ZPMIX_MSG_MAP(proc, range, keys, wait, timeout_ms);
};
inline const Proc *acting_proc(const Lookup &m) {
    return &m.proc;
}
struct Published {
    Proc publisher;
    std::string key;
    Blob value;  // msgpack [type, payload]
    ZPMIX_MSG_MAP(publisher, key, value);
};
struct LookupReply {
    static constexpr const char *type = "modex.found";
    std::vector<Published> found;
    ZPMIX_MSG_MAP(found);
};

// PMIx_Unpublish: removes the caller's keys (all of them when `keys` is empty). Answered by Ok,
// or PMIX_ERR_NOT_FOUND when none of the keys was published by the caller.
struct Unpublish {
    static constexpr const char *type = "modex.unpublish";
    Proc proc;
    std::uint8_t range = 0;
    std::vector<std::string> keys;
    ZPMIX_MSG_MAP(proc, range, keys);
};
inline const Proc *acting_proc(const Unpublish &m) {
    return &m.proc;
}

}  // namespace zpmix::msg
