#pragma once
// Process sets (PMIx psets): names for sets of processes, as MPI Sessions use them. A job's psets
// given at launch (`zpmix run --pset`) are in its JobInfo; the `pset` actor keeps those defined
// and deleted while jobs run (`zpmix pset define/delete`), on every broker alike.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// Operator -> pset: define `name` as `members` (ranks of registered namespaces; a wildcard rank
// names the whole namespace). Answered by Ok, or an ErrorReply: PMIX_ERR_EXISTS when the name is
// taken (at launch or by an earlier define), PMIX_ERR_NOT_FOUND for an unknown namespace,
// PMIX_ERR_BAD_PARAM for an empty name or set or a rank the job does not have. Every broker then
// knows the set, and its processes get PMIX_PROCESS_SET_DEFINE (PMIX_PSET_NAME,
// PMIX_PSET_MEMBERS).
struct PsetDefine {
    static constexpr const char *type = "pset.define";
    std::string name;
    std::vector<Proc> members;
    ZPMIX_MSG_MAP(name, members);
};

// Operator -> pset: delete a set `pset.define` made. Answered by Ok, or PMIX_ERR_NOT_FOUND (also
// for a launch-time set, which lives as long as its job). Processes get PMIX_PROCESS_SET_DELETE.
struct PsetDelete {
    static constexpr const char *type = "pset.delete";
    std::string name;
    ZPMIX_MSG_MAP(name);
};

// pset -> every other broker's pset, in the order the defining broker applied them:
// a set defined (`members` non-empty) or deleted (empty).
struct PsetChanged {
    static constexpr const char *type = "pset.changed";
    std::string name;
    std::vector<Proc> members;
    ZPMIX_MSG_MAP(name, members);
};

// launcher -> its broker's pset: job `nspace` was registered with launch-time sets (`zpmix run
// --pset`; name -> ranks). Its processes get PMIX_PROCESS_SET_DEFINE for each, once, as for a
// set defined while jobs run. No answer.
struct PsetLaunched {
    static constexpr const char *type = "pset.launched";
    std::string nspace;
    std::map<std::string, std::vector<std::uint32_t>> psets;
    ZPMIX_MSG_MAP(nspace, psets);
};

// Anyone -> pset: the process sets that exist now, with their members (the launch-time sets of
// the registered jobs and the defined ones), optionally only those holding `proc` (a non-empty
// nspace). Answered by PsetList, names in order. This is what PMIx_Get(PMIX_PSET_NAMES) and the
// queries PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES and PMIX_QUERY_PSET_MEMBERSHIP read.
struct PsetQuery {
    static constexpr const char *type = "pset.query";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};
struct Pset {
    std::string name;
    std::vector<Proc> members;
    ZPMIX_MSG_MAP(name, members);
};
struct PsetList {
    static constexpr const char *type = "pset.list";
    std::vector<Pset> psets;
    ZPMIX_MSG_MAP(psets);
};

}  // namespace zpmix::msg
