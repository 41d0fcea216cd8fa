#include "server/completions.hpp"

#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "actors/protocol/modex.hpp"
#include "client/values/value_codec.hpp"

namespace zpmix::server {

namespace {

struct Expected {
    Reactor *reactor;
    Completion done;
};

std::mutex mu;
std::unordered_map<std::uint64_t, Expected> expected;
std::uint64_t next_id = 1;

// The host's release of the bytes it lent: never from inside its own callback, which may hold
// the lock its release takes (Slurm's ring collective does), but after it, on our thread.
struct Release {
    pmix_release_cbfunc_t fn = nullptr;
    void *cbdata = nullptr;
    void operator()() const {
        if (fn) fn(cbdata);
    }
};

void complete(void *cbdata, pmix_status_t status, std::string data, const char *what,
              Release release = {}) {
    const auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(cbdata));
    // Posted under the lock: give_up_all(), which the server's finalize takes before its reactor
    // goes, waits for it.
    std::lock_guard lock(mu);
    auto it = expected.find(id);
    if (it == expected.end()) {
        spdlog::warn(
            "pmix server: the host called back ({} callback) where nothing waits: a second call, "
            "one after its timeout, or after PMIx_server_finalize; ignored",
            what);
        if (release.fn) std::thread(release).detach();
        return;
    }
    it->second.reactor->post(
        [done = std::move(it->second.done), status, data = std::move(data), release]() mutable {
            release();
            done(status, std::move(data));
        });
    expected.erase(it);
}

}  // namespace

void *expect(Reactor &reactor, Completion done) {
    std::lock_guard lock(mu);
    const std::uint64_t id = next_id++;
    expected.emplace(id, Expected{&reactor, std::move(done)});
    return reinterpret_cast<void *>(static_cast<std::uintptr_t>(id));
}

bool give_up(void *cbdata) {
    std::lock_guard lock(mu);
    return expected.erase(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(cbdata))) > 0;
}

void give_up_all() {
    std::lock_guard lock(mu);
    expected.clear();
}

void op_done(pmix_status_t status, void *cbdata) {
    complete(cbdata, status, {}, "operation");
}

void info_done(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
               pmix_release_cbfunc_t release, void *release_cbdata) {
    // The host's infos are valid until its release: encoded here, on its thread.
    msgpack::sbuffer out;
    c::Packer pk(out);
    if (c::encode_infos(pk, info, info ? ninfo : 0) != PMIX_SUCCESS && status == PMIX_SUCCESS)
        status = PMIX_ERR_BAD_PARAM;
    complete(cbdata, status, std::string(out.data(), out.size()), "info",
             Release{release, release_cbdata});
}

void spawn_done(pmix_status_t status, char nspace[], void *cbdata) {
    complete(
        cbdata, status,
        nspace == nullptr ? std::string() : std::string(nspace, strnlen(nspace, PMIX_MAX_NSLEN)),
        "spawn");
}

void modex_done(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                pmix_release_cbfunc_t release, void *release_cbdata) {
    std::string bytes = data && ndata ? std::string(data, ndata) : std::string();
    complete(cbdata, status, std::move(bytes), "modex", Release{release, release_cbdata});
}

void lookup_done(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata) {
    // The host's data is valid during this call only: encoded here, on its thread.
    msg::LookupReply reply;
    for (size_t i = 0; status == PMIX_SUCCESS && data != nullptr && i < ndata; ++i) {
        msgpack::sbuffer buf;
        c::Packer pk(buf);
        if (c::encode_value(pk, data[i].value) != PMIX_SUCCESS) {
            status = PMIX_ERR_BAD_PARAM;  // a value that cannot cross processes
            break;
        }
        reply.found.push_back(
            {{std::string(data[i].proc.nspace, strnlen(data[i].proc.nspace, PMIX_MAX_NSLEN)),
              data[i].proc.rank},
             std::string(data[i].key, strnlen(data[i].key, PMIX_MAX_KEYLEN)),
             msg::Blob(buf.data(), buf.data() + buf.size())});
    }
    msgpack::sbuffer out;
    if (status == PMIX_SUCCESS) msgpack::pack(out, reply);
    complete(cbdata, status, std::string(out.data(), out.size()), "lookup");
}

void infos_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                pmix_release_cbfunc_t release, void *release_cbdata) {
    // The host's infos are valid until its release: encoded here, on its thread.
    msgpack::sbuffer out;
    c::Packer pk(out);
    if (c::encode_infos(pk, ninfo ? info : nullptr, ninfo) != PMIX_SUCCESS) {
        spdlog::warn("pmix server: the host's results hold a value that cannot cross processes");
        out.clear();
        c::Packer(out).pack_array(0);
    }
    complete(cbdata, status, std::string(out.data(), out.size()), "info",
             Release{release, release_cbdata});
}

void tool_done(pmix_status_t status, pmix_proc_t *proc, void *cbdata) {
    std::string name;
    if (status == PMIX_SUCCESS && proc != nullptr)
        name = std::string(proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN)) + '\0' +
               std::to_string(proc->rank);
    complete(cbdata, status, std::move(name), "tool connection");
}

}  // namespace zpmix::server
