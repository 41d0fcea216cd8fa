#pragma once
// HostServices (`hostsvc`): the part of a hosting resource manager's pmix_server_module_t that
// serves RFC0015 and RFC0010 requests, as an actor of the broker PMIx_server_init embeds:
// job_control (a request whose targets are a hosted job's), monitor (a hosted client's monitor
// when the host did not ask the library to monitor), query (the keys the broker cannot answer
// from its own state, merged with its own answers by `query`) and log (the channels the broker
// does not serve), tool_connected (a tool's Hello), iof_pull and push_stdin (a hosted job's I/O),
// allocate (PMIx_Allocation_request, the only message here a client or tool sends itself). Each
// area's handlers are in their own file: host_tools.cpp, host_jobctl.cpp, host_query.cpp,
// host_iof.cpp, host_alloc.cpp.
//
// Invariants and limits:
// - Upcalls run on the broker's thread; the host may call back from any thread, before or after
//   the upcall returns; a second or late callback is logged and ignored (completions.hpp).
// - An upcall the host left NULL answers at once: job control and monitoring
//   PMIX_ERR_NOT_SUPPORTED, a query's keys PMIX_ERR_NOT_FOUND, a log's channels
//   PMIX_ERR_NOT_SUPPORTED. One that never calls back is bounded (the request's PMIX_TIMEOUT,
//   else HostModule::kUpcallTimeout).
// - What an upcall lends the host (procs, directives, queries) lives until it called back or
//   its wait ended.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/protocol/host_services.hpp"
#include "actors/runtime/actor.hpp"
#include "pmix_server.h"

namespace zpmix::server {

inline pmix_proc_t host_proc(const msg::Proc &p) {
    pmix_proc_t out;
    PMIX_LOAD_PROCID(&out, p.nspace.c_str(), p.rank);
    return out;
}

// What an upcall lends the host: infos (filled in place: reserve before loading, as the infos
// hold pointers) and procs. Destructs the infos.
struct LentInfos {
    std::vector<pmix_info_t> info;
    std::vector<pmix_proc_t> procs;
    LentInfos() = default;
    LentInfos(const LentInfos &) = delete;
    LentInfos &operator=(const LentInfos &) = delete;
    ~LentInfos();
    template <class T>
    void add(const char *key, T value, pmix_data_type_t type) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), key, &value, type);
    }
    void add_string(const char *key, const std::string &value);
    pmix_info_t *infos() { return info.empty() ? nullptr : info.data(); }
};

// An info_cbfunc's results, decoded on the broker's thread (owned; freed with it).
struct Results {
    pmix_info_t *info = nullptr;
    size_t ninfo = 0;
    Results() = default;
    Results(const Results &) = delete;
    Results &operator=(const Results &) = delete;
    ~Results();
};

class HostServices : public Actor {
  public:
    HostServices(Reactor &reactor, Bus &bus, const pmix_server_module_t &module);

  private:
    pmix_server_module_t module_;

    // host_tools.cpp
    void tool_connected(const Envelope &env, msg::HostToolConnected &m);
    // host_iof.cpp
    void iof_pull(const Envelope &env, msg::HostIofPull &m);
    void push_stdin(const Envelope &env, msg::HostStdin &m);
    // host_alloc.cpp
    void allocate(const Envelope &env, msg::AllocationRequest &m);
    // host_jobctl.cpp
    void job_control(const Envelope &env, msg::HostJobControl &m);
    void monitor(const Envelope &env, msg::HostMonitor &m);
    // host_query.cpp
    void query(const Envelope &env, msg::HostQuery &m);
    void log_request(const Envelope &env, msg::HostLog &m);

    // Expects an info_cbfunc of the host (infos_done): then(status, results), once, on this
    // thread; or (PMIX_ERR_TIMEOUT, none) after `wait`. `keep` lives until then. Returns the
    // cbdata for the upcall.
    using Then = std::function<void(pmix_status_t, const Results &)>;
    void *expect_infos(const std::string &what, std::chrono::milliseconds wait, Then then,
                       std::shared_ptr<void> keep);
    // The same for an op_cbfunc.
    void *expect_op(const std::string &what, std::chrono::milliseconds wait,
                    std::function<void(pmix_status_t)> then, std::shared_ptr<void> keep);
    // An upcall returned rc: PMIX_SUCCESS waits for its callback; anything else completes now
    // (PMIX_OPERATION_SUCCEEDED as a success) unless the callback came already.
    static void returned(pmix_status_t rc, void *cbdata,
                         const std::function<void(pmix_status_t)> &now);
    // How long an upcall's callback may take: the request's timeout and a second, else
    // HostModule::kUpcallTimeout.
    static std::chrono::milliseconds wait_for(std::uint32_t timeout_ms);
};

}  // namespace zpmix::server
