// What a client decodes of other processes' data (client/store.cpp), read on a Get:
// a fence segment's entries, a direct-modex answer's blobs and the job information of a Welcome.
// An input is a flags byte and bytes; flags % 3: 0, the bytes are a fence segment
// (FenceSegment::parse, ClientStore::add_segment); 1, a ModexData body (add_modex_data); 2, a
// Welcome body (set_job). Then Gets of job-level, per-process and committed keys of every
// process the input named. Malformed data must fail those Gets with a status, never crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pmix.h>

#include "actors/protocol/modex.hpp"
#include "actors/protocol/session.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/runtime/envelope.hpp"
#include "client/store.hpp"

namespace {

using zpmix::client::ClientStore;

// Keys the corpus commits, and keys the store answers from job information.
const char *const kKeys[] = {"k",
                             "w",
                             "z",
                             "port",
                             "",
                             PMIX_JOB_SIZE,
                             PMIX_LOCAL_PEERS,
                             PMIX_PROC_MAP,
                             PMIX_HOSTNAME,
                             PMIX_RANK,
                             PMIX_APP_RANK,
                             PMIX_LOCAL_RANK,
                             PMIX_PROCDIR,
                             PMIX_PROCID,
                             PMIX_PSET_NAMES,
                             PMIX_APP_SIZE};

void get_all(ClientStore &store, const std::vector<std::pair<std::string, std::uint32_t>> &procs) {
    for (const auto &[nspace, rank] : procs)
        for (const char *key : kKeys) {
            pmix_value_t *v = nullptr;
            if (store.get(nspace, rank, key, &v) == PMIX_SUCCESS) PMIX_VALUE_RELEASE(v);
            v = nullptr;
            if (store.get_scoped(nspace, rank, key, PMIX_LOCAL, &v) == PMIX_SUCCESS)
                PMIX_VALUE_RELEASE(v);
        }
}

zpmix::Envelope body_of(std::string_view bytes) {
    zpmix::Envelope env;
    env.version = zpmix::kProtocolVersion;
    env.type = "fuzz";
    env.body = bytes;
    return env;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
    ClientStore store;
    std::vector<std::pair<std::string, std::uint32_t>> procs;
    switch (data[0] % 3) {
        case 0:
            try {
                auto segment = zpmix::FenceSegment::parse(bytes);
                for (const auto &e : segment->entries()) procs.emplace_back(e.nspace, e.rank);
                store.add_segment(std::move(segment));
            } catch (const zpmix::SegmentError &) {
                return 0;
            }
            break;
        case 1:
            (void)store.add_modex_data(body_of(bytes));
            try {
                const auto answer = body_of(bytes).as<zpmix::msg::ModexData>();
                procs.emplace_back(answer.data.proc.nspace, answer.data.proc.rank);
            } catch (const zpmix::DecodeError &) {
            }
            break;
        default:
            try {
                const auto welcome = body_of(bytes).as<zpmix::msg::Welcome>();
                store.set_job(welcome.job, 0);
                for (std::uint32_t r = 0; r < welcome.job.procs.size() + 1 && r < 64; ++r)
                    procs.emplace_back(welcome.job.nspace, r);
                procs.emplace_back(welcome.job.nspace, zpmix::msg::kWildcardRank);
            } catch (const zpmix::DecodeError &) {
                return 0;
            }
    }
    get_all(store, procs);
    return 0;
}
