#pragma once
// I/O forwarding (PMIx_IOF_pull, PMIx_IOF_push, PMIx_IOF_deregister): between clients or tools
// and the broker's `iof` actor (actors/iof/iof_actor.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// IOF channels, as pmix_iof_channel_t bits.
constexpr std::uint16_t kIofStdout = 0x0002, kIofStderr = 0x0004, kIofStddiag = 0x0008;

// Client or tool -> iof: forward the output of `procs` (a rank, or a namespace's wildcard) on
// `channels`. Answered by IofPulled, then the output comes as IofDeliver messages under the
// same envelope id, first what the job's cache holds, until IofDeregister (or the session's
// end). Each delivery is acknowledged (IofAck); at most a few go unacknowledged, what waits
// beyond them is bounded by cache_bytes and dropped (oldest or newest) when that is full.
// IofPull.policy
constexpr std::uint8_t kIofLossless = 0, kIofDropOldest = 1, kIofDropNewest = 2;

struct IofPull {
    static constexpr const char *type = "iof.pull";
    std::vector<Proc> procs;
    std::uint16_t channels = kIofStdout | kIofStderr;
    std::uint32_t cache_bytes = 0;  // PMIX_IOF_CACHE_SIZE; 0: the broker's default
    // What a full queue does: nothing is lost (the ranks wait for the puller, as they wait for
    // `zpmix run`), unless the puller asked to drop the oldest (PMIX_IOF_DROP_OLDEST) or the
    // newest (PMIX_IOF_DROP_NEWEST) bytes.
    std::uint8_t policy = kIofLossless;
    std::uint32_t buffering_bytes = 0;  // PMIX_IOF_BUFFERING_SIZE: deliver once this much waits
    std::uint32_t buffering_ms = 0;     // PMIX_IOF_BUFFERING_TIME: ... or this long passed
    ZPMIX_MSG_MAP(procs, channels, cache_bytes, policy, buffering_bytes, buffering_ms);
};
struct IofPulled {
    static constexpr const char *type = "iof.pulled";
    std::int32_t status = 0;
    ZPMIX_MSG_MAP(status);
};

// A piece of a rank's output: whole lines (one read's worth), a chunk of a longer line, or the
// last bytes at EOF.
struct IofChunk {
    Proc source;
    std::uint16_t channel = kIofStdout;
    std::int64_t time_us = 0;  // when the broker read it (µs since the epoch)
    std::string data;
    ZPMIX_MSG_MAP(source, channel, time_us, data);
};

// iof -> the puller, under its IofPull's id: output, in the order it was produced per rank and
// channel; `dropped`: bytes dropped for this pull (a full cache) since the last delivery.
struct IofDeliver {
    static constexpr const char *type = "iof.deliver";
    std::vector<IofChunk> chunks;
    std::uint64_t dropped = 0;
    ZPMIX_MSG_MAP(chunks, dropped);
};

// Puller -> iof, one-way: a delivery of pull `pull` (its IofPull's envelope id) was handled.
struct IofAck {
    static constexpr const char *type = "iof.ack";
    std::uint64_t pull = 0;
    ZPMIX_MSG_MAP(pull);
};

// Puller -> iof: stop pull `pull`. Answered by Ok (PMIX_ERR_NOT_FOUND for a pull it does not
// have); nothing of it is delivered after the answer.
struct IofDeregister {
    static constexpr const char *type = "iof.deregister";
    std::uint64_t pull = 0;
    ZPMIX_MSG_MAP(pull);
};

// launcher -> iof (internal): keep job `nspace`'s output past its end for `peer`, the tool that
// spawned it with PMIX_FWD_STDOUT/_STDERR, while that tool's session lasts (RFC0025: forwarded
// output waits for the spawner's pull, which can come only once PMIx_Spawn returned, when a
// short job may be over already).
struct IofKeep {
    static constexpr const char *type = "iof.keep";
    std::string nspace;
    std::string peer;
    ZPMIX_MSG_MAP(nspace, peer);
};

// Tool or client -> iof: PMIx_IOF_push, `data` to the stdin of `targets` (ranks, or a namespace's
// wildcard: its stdin ranks), then with `eof` their stdin closed. Answered by Ok once written
// (or dropped: the ranks are gone), or an ErrorReply (a target without a stdin pipe:
// PMIX_ERR_NOT_SUPPORTED).
struct IofPush {
    static constexpr const char *type = "iof.push";
    std::vector<Proc> targets;
    std::string data;
    bool eof = false;
    ZPMIX_MSG_MAP(targets, data, eof);
};

}  // namespace zpmix::msg
