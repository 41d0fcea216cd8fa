// The host's connect and disconnect upcalls: PMIx_Connect and PMIx_Disconnect of hosted clients,
// served as OpenPMIx serves them. Each participant of this node sends its part (msg::HostConnect);
// once every participant the node runs is in, the host's upcall runs once for the node with the
// procs as named, and every part is answered when it called back. The host does the rest across
// its nodes: makes the other participants' namespaces known here (PMIx_server_register_nspace,
// as mpirun's connect does for a job of another mpirun) and brings their data on demand
// (direct_modex). Without the upcall the node serves it itself when every participant runs
// here, and answers PMIX_ERR_NOT_SUPPORTED otherwise. A part waits at most its PMIX_TIMEOUT (else
// kUpcallTimeout) for the others and the host.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "actors/registry/namespace_table.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"

namespace zpmix::server {

namespace {

std::string connect_key(const msg::HostConnect &m) {
    std::vector<msg::Proc> procs = m.procs;
    std::sort(procs.begin(), procs.end());
    std::string key = m.disconnect ? "d" : "c";
    for (const auto &p : procs) key += fmt::format("|{}:{}", p.nspace, p.rank);
    return key;
}

}  // namespace

void HostModule::set_node(const NamespaceTable *namespaces, std::string node) {
    namespaces_ = namespaces;
    node_ = std::move(node);
}

// The participants this node runs, and whether it runs them all (every namespace known here).
std::set<msg::Proc> HostModule::local_participants(const std::vector<msg::Proc> &procs,
                                                   bool &all_local) const {
    std::set<msg::Proc> out;
    all_local = true;
    for (const auto &p : procs) {
        const auto ns = namespaces_ ? namespaces_->find(p.nspace) : nullptr;
        if (!ns || !ns->job || ns->elsewhere) {
            all_local = false;
            continue;
        }
        for (const auto &info : ns->job->procs) {
            if (p.rank != PMIX_RANK_WILDCARD && info.rank != p.rank) continue;
            if (info.hostname == node_)
                out.insert({p.nspace, info.rank});
            else
                all_local = false;
        }
    }
    return out;
}

void HostModule::connect(const Envelope &env, msg::HostConnect &m) {
    const char *what = m.disconnect ? "disconnect" : "connect";
    if (m.procs.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "no processes named");
    const std::string key = connect_key(m);
    auto [it, fresh] = connects_.try_emplace(key);
    ConnectOp &op = it->second;
    if (fresh) {
        op.procs = m.procs;
        op.disconnect = m.disconnect;
        op.timeout_ms = m.timeout_ms;
        op.expected = local_participants(m.procs, op.all_local);
        const auto wait =
            m.timeout_ms > 0
                ? std::chrono::milliseconds(m.timeout_ms)
                : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
        op.timer = reactor().after(wait, [this, key, what] {
            auto node = connects_.extract(key);
            if (!node) return;
            log().warn("a {} timed out waiting for this node's participants", what);
            for (const auto &w : node.mapped().waiting)
                reply_error(w, PMIX_ERR_TIMEOUT, std::string("the ") + what + " timed out");
        });
    }
    if (!op.expected.contains(m.proc)) {
        if (fresh) {
            reactor().cancel(op.timer);
            connects_.erase(it);
        }
        return reply_error(env, PMIX_ERR_BAD_PARAM, "the caller is not among the participants");
    }
    op.arrived.insert(m.proc);
    op.waiting.push_back(env);
    if (op.arrived.size() < op.expected.size()) return;
    reactor().cancel(op.timer);
    auto node = connects_.extract(key);
    call_connect(std::move(node.mapped()));
}

void HostModule::call_connect(ConnectOp op) {
    auto waiting = std::make_shared<std::vector<Envelope>>(std::move(op.waiting));
    const char *what = op.disconnect ? "disconnect" : "connect";
    auto answer = [this, waiting, what](pmix_status_t status) {
        for (const auto &w : *waiting) {
            if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
                reply(w, msg::Ok{});
            else
                reply_error(w, status, std::string("the resource manager's ") + what + " failed");
        }
    };
    const auto upcall = op.disconnect ? module_.disconnect : module_.connect;
    if (!upcall) {
        if (op.all_local) return answer(PMIX_SUCCESS);  // this node is the whole collective
        return answer(PMIX_ERR_NOT_SUPPORTED);
    }
    struct ConnectLent {
        std::vector<pmix_proc_t> procs;
        pmix_info_t info;
        bool timeout = false;
        ~ConnectLent() {
            if (timeout) PMIX_INFO_DESTRUCT(&info);
        }
    };
    auto lent = std::make_shared<ConnectLent>();
    for (const auto &p : op.procs) {
        pmix_proc_t q;
        PMIX_LOAD_PROCID(&q, p.nspace.c_str(), p.rank);
        lent->procs.push_back(q);
    }
    if (op.timeout_ms > 0) {
        int seconds = static_cast<int>((op.timeout_ms + 999) / 1000);
        PMIX_INFO_LOAD(&lent->info, PMIX_TIMEOUT, &seconds, PMIX_INT);
        lent->timeout = true;
    }
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata =
        expect(reactor(), [this, answer, timer, lent](pmix_status_t status, std::string) {
            reactor().cancel(*timer);
            answer(status);
        });
    const auto wait = op.timeout_ms > 0
                          ? std::chrono::milliseconds(op.timeout_ms) + std::chrono::seconds(1)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, answer, what] {
        if (!give_up(cbdata)) return;
        log().warn("the host's {} upcall did not call back in time", what);
        answer(PMIX_ERR_TIMEOUT);
    });
    const pmix_status_t rc =
        upcall(lent->procs.data(), lent->procs.size(), lent->timeout ? &lent->info : nullptr,
               lent->timeout ? 1 : 0, op_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    if (rc != PMIX_OPERATION_SUCCEEDED)
        log().info("the host's {} upcall failed: {}", what, PMIx_Error_string(rc));
    answer(rc);
}

}  // namespace zpmix::server
