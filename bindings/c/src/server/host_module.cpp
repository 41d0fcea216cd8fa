#include "server/host_module.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <msgpack.hpp>

#include "actors/protocol/reader.hpp"
#include "client/events/local_event.hpp"
#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"

namespace zpmix::server {

using namespace std::chrono_literals;

namespace {

pmix_proc_t to_pmix(const msg::Proc &p) {
    pmix_proc_t out;
    PMIX_LOAD_PROCID(&out, p.nspace.c_str(), p.rank);
    return out;
}

}  // namespace

std::optional<msg::Blob> nodes_parts(const std::string &parts) {
    std::size_t at = 0, n = 0;
    try {
        while (at < parts.size()) {
            const std::size_t from = at;
            msgpack::object_handle h = msgpack::unpack(parts.data(), parts.size(), at);
            if (h.get().type != msgpack::type::BIN || at <= from) return std::nullopt;
            ++n;
        }
    } catch (const std::exception &) {
        return std::nullopt;
    }
    msgpack::sbuffer out;
    msgpack::packer<msgpack::sbuffer>(out).pack_array(static_cast<std::uint32_t>(n));
    out.write(parts.data(), parts.size());
    return msg::Blob(out.data(), out.data() + out.size());
}

HostModule::HostModule(Reactor &reactor, Bus &bus, const pmix_server_module_t &module)
    : Actor("host", reactor, bus), module_(module) {
    on(&HostModule::connected, Access::internal);
    on(&HostModule::client_ended, Access::internal);
    on(&HostModule::abort, Access::internal);
    on(&HostModule::fence, Access::internal);
    on(&HostModule::direct_modex, Access::internal);
    on(&HostModule::notify, Access::internal);
    on(&HostModule::publish, Access::internal);
    on(&HostModule::lookup, Access::internal);
    on(&HostModule::unpublish, Access::internal);
    on(&HostModule::register_events, Access::internal);
    on(&HostModule::deregister_events, Access::internal);
    on(&HostModule::spawn, Access::internal);
    on(&HostModule::connect, Access::session);
    on(&HostModule::group, Access::internal);
    on(&HostModule::modex_data, Access::internal);
    on(&HostModule::modex_error, Access::internal);
    on(&HostModule::done, Access::internal);
}

void HostModule::set_client(const msg::Proc &proc, void *server_object, bool forget,
                            std::uint32_t uid, std::uint32_t gid) {
    if (forget)
        clients_.erase(proc);
    else
        clients_[proc] = Client{server_object, uid, gid};
}

void *HostModule::object_of(const msg::Proc &p) const {
    auto it = clients_.find(p);
    return it == clients_.end() ? nullptr : it->second.server_object;
}

void HostModule::connected(const Envelope &, msg::HostClientConnected &m) {
    pmix_proc_t p = to_pmix(m.proc);
    pmix_status_t rc = PMIX_SUCCESS;
    if (module_.client_connected2)
        rc = module_.client_connected2(&p, object_of(m.proc), nullptr, 0, nullptr, nullptr);
    else if (module_.client_connected)
        rc = module_.client_connected(&p, object_of(m.proc), nullptr, nullptr);
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) return send("broker", m.open);
    log().warn("the host refused client {}.{}: {}", m.proc.nspace, m.proc.rank,
               PMIx_Error_string(rc));
    send(m.peer, msg::ErrorReply{rc, "the resource manager refused this client"}, m.id);
}

void HostModule::client_ended(const Envelope &, msg::HostClientEnded &m) {
    forget_event_codes(m.proc);
    if (!m.finalized) return;
    if (!module_.client_finalized) {
        if (!m.peer.empty()) send(m.peer, msg::Ok{}, m.id);
        return;
    }
    pmix_proc_t p = to_pmix(m.proc);
    if (m.peer.empty()) {
        void *cbdata = expect(reactor(), [](pmix_status_t, std::string) {});
        const pmix_status_t rc = module_.client_finalized(&p, object_of(m.proc), op_done, cbdata);
        if (rc != PMIX_SUCCESS) give_up(cbdata);  // done, or refused: no callback comes
        return;
    }
    // The client's PMIx_Finalize returns once the host called back, whatever it says: the
    // client finalized either way.
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(reactor(), [this, peer, id, timer](pmix_status_t, std::string) {
        reactor().cancel(*timer);
        send(peer, msg::Ok{}, id);
    });
    *timer = reactor().after(kUpcallTimeout, [this, cbdata, peer, id] {
        if (!give_up(cbdata)) return;
        log().warn("the host's client_finalized upcall did not call back within {} s",
                   std::chrono::duration_cast<std::chrono::seconds>(kUpcallTimeout).count());
        send(peer, msg::Ok{}, id);
    });
    const pmix_status_t rc = module_.client_finalized(&p, object_of(m.proc), op_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    send(peer, msg::Ok{}, id);
}

void HostModule::abort(const Envelope &, msg::HostAbort &m) {
    if (!module_.abort)
        return send(m.peer,
                    msg::ErrorReply{PMIX_ERR_NOT_SUPPORTED,
                                    "the resource manager does not abort processes"},
                    m.id);
    pmix_proc_t p = to_pmix(m.proc);
    std::vector<pmix_proc_t> procs;
    for (const auto &q : m.procs) procs.push_back(to_pmix(q));
    void *cbdata = answer_when_done("abort", m.peer, m.id);
    const pmix_status_t rc =
        module_.abort(&p, object_of(m.proc), m.status, m.message.c_str(),
                      procs.empty() ? nullptr : procs.data(), procs.size(), op_done, cbdata);
    returned(rc, cbdata, "abort", m.peer, m.id);
}

void HostModule::fence(const Envelope &, msg::HostFence &m) {
    const std::string key = m.key;
    auto answer = [this, key](pmix_status_t status, msg::Blob result = {}) {
        send("fence", msg::HostFenceDone{key, status, std::move(result)});
    };
    if (!module_.fence_nb) {
        log().warn("fence {} spans nodes, and the host has no fence_nb upcall", key);
        return answer(PMIX_ERR_NOT_SUPPORTED);
    }
    std::vector<pmix_proc_t> procs;
    for (const auto &p : m.participants) procs.push_back(to_pmix(p));
    pmix_info_t info[2];
    std::size_t ninfo = 0;
    bool yes = true;
    if (m.collect) PMIX_INFO_LOAD(&info[ninfo++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (m.timeout_ms > 0) {
        int seconds = static_cast<int>((m.timeout_ms + 999) / 1000);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &seconds, PMIX_INT);
    }
    // The part is the host's, malloc'd, as OpenPMIx hands it: mpirun loads it into a buffer of
    // its own, which frees it.
    char *part = static_cast<char *>(std::malloc(m.part.empty() ? 1 : m.part.size()));
    if (part == nullptr) return answer(PMIX_ERR_NOMEM);
    std::memcpy(part, m.part.data(), m.part.size());
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata =
        expect(reactor(), [this, answer, timer, key](pmix_status_t status, std::string data) {
            reactor().cancel(*timer);
            if (status != PMIX_SUCCESS) return answer(status);
            auto verdict = nodes_parts(data);
            if (!verdict) {
                log().error(
                    "fence {}: the host's fence_nb answered bytes that are not the nodes' "
                    "parts",
                    key);
                return answer(PMIX_ERR_UNPACK_FAILURE);
            }
            answer(PMIX_SUCCESS, std::move(*verdict));
        });
    const auto wait = m.timeout_ms > 0
                          ? std::chrono::milliseconds(m.timeout_ms) + 1s
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, answer, key] {
        if (!give_up(cbdata)) return;
        log().warn("fence {}: the host's fence_nb did not call back in time", key);
        answer(PMIX_ERR_TIMEOUT);
    });
    const pmix_status_t rc = module_.fence_nb(procs.data(), procs.size(), ninfo ? info : nullptr,
                                              ninfo, part, m.part.size(), modex_done, cbdata);
    for (std::size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    log().info("fence {}: the host's fence_nb failed: {}", key, PMIx_Error_string(rc));
    answer(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_SUPPORTED : rc);
}

void HostModule::direct_modex(const Envelope &env, msg::HostDirectModex &m) {
    const std::uint64_t id = env.id;
    auto fail = [this, id](pmix_status_t status, std::string why) {
        send("modex", msg::ErrorReply{status, std::move(why)}, id);
    };
    if (!module_.direct_modex)
        return fail(PMIX_ERR_NOT_SUPPORTED,
                    "the process runs on another node, and the resource manager does not bring "
                    "its data (no direct_modex)");
    pmix_proc_t p = to_pmix(m.proc);
    pmix_info_t info;
    int seconds = static_cast<int>((m.timeout_ms + 999) / 1000);
    if (m.timeout_ms > 0) PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(reactor(), [this, id, fail, timer](pmix_status_t status,
                                                             std::string data) {
        reactor().cancel(*timer);
        if (status != PMIX_SUCCESS)
            return fail(status, "the resource manager's direct modex failed");
        msg::ModexData out;
        try {
            msg::Reader r(data.data(), data.size());
            msg::read(r, out.data);
            if (!r.at_end()) throw DecodeError("trailing bytes");
        } catch (const std::exception &e) {
            log().error("direct modex: the host's answer does not decode: {}", e.what());
            return fail(PMIX_ERR_UNPACK_FAILURE, "the resource manager's answer does not decode");
        }
        send("modex", out, id);
    });
    const auto wait = m.timeout_ms > 0
                          ? std::chrono::milliseconds(m.timeout_ms)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, fail] {
        if (!give_up(cbdata)) return;
        log().warn("the host's direct_modex upcall did not call back in time");
        fail(PMIX_ERR_TIMEOUT, "the resource manager did not bring the data in time");
    });
    const pmix_status_t rc = module_.direct_modex(&p, m.timeout_ms > 0 ? &info : nullptr,
                                                  m.timeout_ms > 0 ? 1 : 0, modex_done, cbdata);
    if (m.timeout_ms > 0) PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;
    reactor().cancel(*timer);
    fail(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc,
         "the resource manager's direct modex failed");
}

void HostModule::notify(const Envelope &, msg::HostNotify &m) {
    if (!module_.notify_event) return;  // the event stays on this node
    std::shared_ptr<client::LocalEvent> ev;
    try {
        ev = client::LocalEvent::from_wire(m.event);
    } catch (const std::exception &e) {
        return log().warn("an event for the host does not decode: {}", e.what());
    }
    // The infos lent live until the host called back (or gave up): the event's, and its custom
    // range (PMIX_EVENT_CUSTOM_RANGE, the procs or groups it is addressed to) for the host's
    // other nodes to deliver it by.
    struct NotifyLent {
        std::shared_ptr<client::LocalEvent> ev;
        std::vector<pmix_info_t> info;
        ~NotifyLent() {
            for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
        }
    };
    auto lent = std::make_shared<NotifyLent>();
    lent->ev = ev;
    lent->info.resize(ev->ninfo + (ev->addressed_to.empty() ? 0 : 1));
    for (std::size_t i = 0; i < ev->ninfo; ++i) PMIX_INFO_XFER(&lent->info[i], &ev->info[i]);
    if (!ev->addressed_to.empty()) {
        std::vector<pmix_proc_t> procs;
        for (const auto &p : ev->addressed_to) procs.push_back(to_pmix(p));
        pmix_data_array_t to{PMIX_PROC, procs.size(), procs.data()};
        PMIX_INFO_LOAD(&lent->info.back(), PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_DATA_ARRAY);
    }
    void *cbdata = expect(reactor(), [lent](pmix_status_t, std::string) {});
    const pmix_status_t rc = module_.notify_event(ev->status, &ev->source, ev->range,
                                                  lent->info.empty() ? nullptr : lent->info.data(),
                                                  lent->info.size(), op_done, cbdata);
    if (rc != PMIX_SUCCESS && give_up(cbdata) && rc != PMIX_OPERATION_SUCCEEDED)
        log().info("the host's notify_event refused event {}: {}", ev->status,
                   PMIx_Error_string(rc));
}

// What a publish, lookup or unpublish lends the host: infos and NULL-terminated keys.
struct Lent {
    std::vector<pmix_info_t> info;
    std::vector<std::string> key_strings;
    std::vector<char *> keys;
    Lent() = default;
    Lent(const Lent &) = delete;
    Lent &operator=(const Lent &) = delete;
    ~Lent() {
        for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
    }
    // None: no array (unpublish's "all of the caller's").
    void set_keys(const std::vector<std::string> &k) {
        if (k.empty()) return;
        key_strings = k;
        for (auto &ks : key_strings) keys.push_back(ks.data());
        keys.push_back(nullptr);
    }
    template <class T>
    void add(const char *key, T value, pmix_data_type_t type) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), key, &value, type);
    }
};

void HostModule::no_directory(const char *upcall, std::uint64_t id) {
    send("modex",
         msg::ErrorReply{PMIX_ERR_NOT_SUPPORTED,
                         fmt::format("the resource manager keeps no directory beyond this node "
                                     "(no {} upcall)",
                                     upcall)},
         id);
}

void HostModule::add_identity(Lent &lent, const msg::Proc &proc) const {
    auto it = clients_.find(proc);
    if (it == clients_.end()) return;
    lent.add(PMIX_USERID, it->second.uid, PMIX_UINT32);
    lent.add(PMIX_GRPID, it->second.gid, PMIX_UINT32);
}

void HostModule::publish(const Envelope &env, msg::HostPublish &hm) {
    const msg::Publish &m = hm.request;
    if (!module_.publish) return no_directory("publish", env.id);
    auto lent = std::make_shared<Lent>();
    try {
        const msgpack::object_handle h = msgpack::unpack(m.data.data(), m.data.size());
        if (h.get().type != msgpack::type::MAP) throw DecodeError("not a map");
        lent->info.reserve(h.get().via.map.size + 4);  // no reallocation: infos hold pointers
        for (const auto &kv : h.get().via.map) {
            lent->info.emplace_back();
            pmix_info_t &i = lent->info.back();
            PMIX_INFO_CONSTRUCT(&i);
            const std::string key = kv.key.as<std::string>();
            PMIX_LOAD_KEY(i.key, key.c_str());
            if (c::decode_value(kv.val, &i.value) != PMIX_SUCCESS) throw DecodeError(key);
        }
    } catch (const std::exception &e) {
        return send("modex",
                    msg::ErrorReply{PMIX_ERR_UNPACK_FAILURE,
                                    std::string("published data does not decode: ") + e.what()},
                    env.id);
    }
    lent->add(PMIX_RANGE, static_cast<pmix_data_range_t>(m.range), PMIX_DATA_RANGE);
    lent->add(PMIX_PERSISTENCE, static_cast<pmix_persistence_t>(m.persistence), PMIX_PERSIST);
    add_identity(*lent, m.proc);
    pmix_proc_t p = to_pmix(m.proc);
    void *cbdata = answer_when_done("publish", "modex", env.id, lent);
    const pmix_status_t rc =
        module_.publish(&p, lent->info.data(), lent->info.size(), op_done, cbdata);
    returned(rc, cbdata, "publish", "modex", env.id);
}

void HostModule::lookup(const Envelope &env, msg::HostLookup &hm) {
    const msg::Lookup &m = hm.request;
    const std::uint64_t id = env.id;
    if (!module_.lookup) return no_directory("lookup", id);
    auto lent = std::make_shared<Lent>();
    lent->set_keys(m.keys);
    lent->info.reserve(5);
    lent->add(PMIX_RANGE, static_cast<pmix_data_range_t>(m.range), PMIX_DATA_RANGE);
    if (m.wait) lent->add(PMIX_WAIT, true, PMIX_BOOL);
    if (m.timeout_ms > 0)
        lent->add(PMIX_TIMEOUT, static_cast<int>((m.timeout_ms + 999) / 1000), PMIX_INT);
    add_identity(*lent, m.proc);
    auto fail = [this, id](pmix_status_t status, std::string why) {
        send("modex", msg::ErrorReply{status, std::move(why)}, id);
    };
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(reactor(), [this, id, fail, timer, lent](pmix_status_t status,
                                                                   std::string data) {
        reactor().cancel(*timer);
        if (status != PMIX_SUCCESS) return fail(status, "the resource manager's lookup failed");
        msg::LookupReply out;
        try {
            msg::Reader r(data.data(), data.size());
            msg::read(r, out);
            if (!r.at_end()) throw DecodeError("trailing bytes");
        } catch (const std::exception &e) {
            log().error("lookup: the host's answer does not decode: {}", e.what());
            return fail(PMIX_ERR_UNPACK_FAILURE, "the resource manager's answer does not decode");
        }
        if (out.found.empty()) return fail(PMIX_ERR_NOT_FOUND, "no such key published");
        send("modex", out, id);
    });
    const auto wait = m.timeout_ms > 0
                          ? std::chrono::milliseconds(m.timeout_ms) + 1s
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, fail] {
        if (!give_up(cbdata)) return;
        log().warn("the host's lookup upcall did not call back in time");
        fail(PMIX_ERR_TIMEOUT, "the resource manager's lookup did not answer in time");
    });
    pmix_proc_t p = to_pmix(m.proc);
    const pmix_status_t rc = module_.lookup(&p, lent->keys.data(), lent->info.data(),
                                            lent->info.size(), lookup_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;
    reactor().cancel(*timer);
    fail(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc,
         "the resource manager's lookup failed");
}

void HostModule::unpublish(const Envelope &env, msg::HostUnpublish &hm) {
    const msg::Unpublish &m = hm.request;
    if (!module_.unpublish) return no_directory("unpublish", env.id);
    auto lent = std::make_shared<Lent>();
    lent->set_keys(m.keys);
    lent->info.reserve(3);
    lent->add(PMIX_RANGE, static_cast<pmix_data_range_t>(m.range), PMIX_DATA_RANGE);
    add_identity(*lent, m.proc);
    pmix_proc_t p = to_pmix(m.proc);
    void *cbdata = answer_when_done("unpublish", "modex", env.id, lent);
    const pmix_status_t rc =
        module_.unpublish(&p, lent->keys.empty() ? nullptr : lent->keys.data(), lent->info.data(),
                          lent->info.size(), op_done, cbdata);
    returned(rc, cbdata, "unpublish", "modex", env.id);
}

void HostModule::dmodex_request(const msg::Proc &proc, pmix_dmodex_response_fn_t cbfunc,
                                void *cbdata) {
    const std::uint64_t id = next_request_++;
    dmodex_requests_.emplace(id, DmodexRequest{cbfunc, cbdata});
    send("modex", msg::ModexGet{proc, "", 0, {}, 0}, id);
}

void HostModule::done(const Envelope &, msg::Ok &) {}  // a registration of the host's took

void HostModule::modex_data(const Envelope &env, msg::ModexData &m) {
    auto node = dmodex_requests_.extract(env.id);
    if (!node) return;
    msgpack::sbuffer buf;
    msgpack::pack(buf, m.data);
    node.mapped().cbfunc(PMIX_SUCCESS, buf.data(), buf.size(), node.mapped().cbdata);
}

void HostModule::modex_error(const Envelope &env, msg::ErrorReply &m) {
    auto node = dmodex_requests_.extract(env.id);
    if (!node) {  // a registration of the host's (a process set) the broker refused
        log().warn("the broker refused the host's request: {}", m.message);
        return;
    }
    log().info("PMIx_server_dmodex_request: {}", m.message);
    node.mapped().cbfunc(m.status, nullptr, 0, node.mapped().cbdata);
}

void *HostModule::answer_when_done(const std::string &what, std::string peer, std::uint64_t id,
                                   std::shared_ptr<void> keep) {
    // The timer and the callback each end the wait; whichever comes second finds it over.
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata =
        expect(reactor(), [this, peer, id, timer, keep](pmix_status_t status, std::string) {
            reactor().cancel(*timer);
            if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
                send(peer, msg::Ok{}, id);
            else
                send(peer, msg::ErrorReply{status, "the resource manager answered so"}, id);
        });
    *timer = reactor().after(kUpcallTimeout, [this, cbdata, what, peer, id] {
        if (!give_up(cbdata)) return;
        log().warn("the host's {} upcall did not call back within {} s", what,
                   std::chrono::duration_cast<std::chrono::seconds>(kUpcallTimeout).count());
        send(peer, msg::ErrorReply{PMIX_ERR_TIMEOUT, "the resource manager did not answer " + what},
             id);
    });
    return cbdata;
}

void HostModule::returned(pmix_status_t rc, void *cbdata, const std::string &what,
                          const std::string &peer, std::uint64_t id) {
    if (rc == PMIX_SUCCESS) return;  // its callback answers
    if (!give_up(cbdata)) return;    // it called back already, and answered
    if (rc == PMIX_OPERATION_SUCCEEDED) return send(peer, msg::Ok{}, id);
    log().info("the host's {} upcall failed: {}", what, PMIx_Error_string(rc));
    send(peer, msg::ErrorReply{rc, "the resource manager refused " + what}, id);
}

}  // namespace zpmix::server
