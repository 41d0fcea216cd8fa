#pragma once
// NotifyRights: whether a client (a rank) may publish the event it asks to notify, by the rules of
// actors/protocol/event_rights.hpp, for the events actor. The codes and ranges are the header's;
// what this adds is which jobs are related to the client's own, so that a custom range may name
// their processes:
// - its spawn family: jobs with a common ancestor through PMIX_PARENT_ID (the namespace table's
//   JobInfo::parent), and the job its own debugs (PMIX_DEBUG_TARGET, for PMIX_DEBUGGER_RELEASE);
// - jobs it took part in a collective with (msg::JobsRelated: a fence or PMIx_Connect across
//   jobs, a group's construction), until either ends. Relations are by job, not by process: a
//   rank of a job connected to another may name that job's processes even if it was not among
//   the connect's participants.
// Limits: it decides for processes that use the API; a process of the same user can open a tool
// session from another process (not from a launched rank's own: the registry refuses it), which
// acts for the runtime, as an operator does.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/protocol/events.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/envelope.hpp"

namespace zpmix {

class NotifyRights {
  public:
    explicit NotifyRights(const NamespaceTable &namespaces) : namespaces_(namespaces) {}

    // Why the client of `session` may not notify `ev` (its source already checked to be the
    // client); empty when it may.
    std::string refusal(const PeerSession &session, const msg::Event &ev) const;

    void relate(const std::vector<std::string> &nspaces);  // msg::JobsRelated
    void forget(const std::string &nspace);                // the job ended
    // Whether `a` and `b` are one job or related jobs.
    bool related(const std::string &a, const std::string &b) const;

  private:
    const NamespaceTable &namespaces_;
    std::map<std::string, std::set<std::string>> related_;  // symmetric, by job

    // The first job of `nspace`'s spawn family (itself when no parent is known).
    std::string family_root(const NamespaceTable::Snapshot &s, const std::string &nspace) const;
};

}  // namespace zpmix
