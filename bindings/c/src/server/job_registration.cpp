#include "server/job_registration.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include <msgpack.hpp>

#include "client/values/value_codec.hpp"
#include "debugger.hpp"
#include "pmix.h"
#include "server/maps.hpp"

namespace zpmix::server {

namespace {

bool is(const pmix_info_t &i, const char *key) {
    return PMIX_CHECK_KEY(&i, key);
}

std::optional<std::uint64_t> number_of(const pmix_value_t &v) {
    pmix_status_t rc;
    std::uint64_t n = 0;
    PMIX_VALUE_GET_NUMBER(rc, &v, n, std::uint64_t);
    if (rc == PMIX_SUCCESS) return n;
    return std::nullopt;
}

std::optional<std::string> string_of(const pmix_value_t &v) {
    if (v.type == PMIX_STRING && v.data.string) return std::string(v.data.string);
    return std::nullopt;
}

// The infos of a PMIX_DATA_ARRAY of PMIX_INFO; none for any other value.
std::optional<std::pair<const pmix_info_t *, std::size_t>> array_of(const pmix_value_t &v) {
    if (v.type != PMIX_DATA_ARRAY || !v.data.darray || v.data.darray->type != PMIX_INFO)
        return std::nullopt;
    return std::make_pair(static_cast<const pmix_info_t *>(v.data.darray->array),
                          v.data.darray->size);
}

// The infos as the value codec's array (decode_infos); one that cannot cross processes (a
// pointer) is left out.
msg::Blob encode(const std::vector<const pmix_info_t *> &infos) {
    msgpack::sbuffer items;
    std::uint32_t n = 0;
    for (const pmix_info_t *i : infos) {
        msgpack::sbuffer one;
        c::Packer pk(one);
        if (c::encode_info(pk, *i) != PMIX_SUCCESS) continue;
        items.write(one.data(), one.size());
        ++n;
    }
    if (n == 0) return {};
    msgpack::sbuffer buf;
    c::Packer(buf).pack_array(n);
    buf.write(items.data(), items.size());
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

// A rank's placement as the host gave it (PMIX_PROC_DATA, PMIX_PROC_INFO_ARRAY).
struct ProcData {
    std::optional<std::uint32_t> local_rank, node_rank, node_id, app_num;
    std::optional<std::string> hostname, cpuset, locality;
    std::vector<const pmix_info_t *> others;  // the rest, kept for the clients' Gets
};

// PMIX_DEBUG_STOP_IN_INIT and PMIX_DEBUG_STOP_IN_APP into the job (read as PMIx_Spawn reads them);
// false with the reason for chosen ranks, which zpmix does not support. Other keys: true.
bool read_stop(const pmix_info_t &i, msg::JobInfo &job, JobRegistration &r) {
    const bool in_init = is(i, PMIX_DEBUG_STOP_IN_INIT);
    if (!in_init && !is(i, PMIX_DEBUG_STOP_IN_APP)) return true;
    const auto all = c::stops_every_rank(i.value);
    if (!all) {
        r.error = std::string(i.key) + " for chosen ranks is not supported (every rank or none)";
        r.unsupported = true;
        return false;
    }
    (in_init ? job.stop_in_init : job.stop_in_app) = *all;
    return true;
}

}  // namespace

JobRegistration job_from_infos(const std::string &nspace, int nlocalprocs, const pmix_info_t info[],
                               std::size_t ninfo, const std::string &this_node) {
    JobRegistration r;
    msg::JobInfo &job = r.job;
    job.nspace = nspace;
    std::optional<std::uint32_t> size;
    std::vector<std::string> nodes;
    std::vector<std::vector<std::uint32_t>> ranks_per_node;
    std::map<std::uint32_t, ProcData> procs;
    std::vector<const pmix_info_t *> job_infos;
    std::map<std::string, std::vector<const pmix_info_t *>> node_infos;  // other nodes', by name
    // The node map first, so that a node-level array naming its node by id finds the name.
    for (std::size_t n = 0; info && n < ninfo; ++n)
        if (is(info[n], PMIX_NODE_MAP))
            if (auto s = string_of(info[n].value))
                if (auto parsed = parse_node_map(*s)) nodes = std::move(*parsed);
    for (std::size_t n = 0; info && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (is(i, PMIX_REGISTER_NODATA)) {
            r.no_data = PMIX_INFO_TRUE(&i);
        } else if (is(i, PMIX_NODE_MAP)) {
            auto s = string_of(i.value);
            auto parsed = s ? parse_node_map(*s) : std::nullopt;
            if (!parsed) {
                r.error = "PMIX_NODE_MAP is not a node map of PMIx_generate_regex";
                return r;
            }
            nodes = std::move(*parsed);
        } else if (is(i, PMIX_PROC_MAP)) {
            auto s = string_of(i.value);
            auto parsed = s ? parse_proc_map(*s) : std::nullopt;
            if (!parsed) {
                r.error = "PMIX_PROC_MAP is not a process map of PMIx_generate_ppn";
                return r;
            }
            ranks_per_node = std::move(*parsed);
        } else if (is(i, PMIX_PROC_DATA) || is(i, PMIX_PROC_INFO_ARRAY)) {
            auto arr = array_of(i.value);
            if (!arr || arr->second == 0 || !is(arr->first[0], PMIX_RANK)) {
                r.error = std::string(i.key) + " is not an array of infos led by PMIX_RANK";
                return r;
            }
            const auto rank = number_of(arr->first[0].value);
            if (!rank) {
                r.error = std::string(i.key) + ": PMIX_RANK is not a number";
                return r;
            }
            ProcData &p = procs[static_cast<std::uint32_t>(*rank)];
            for (std::size_t k = 1; k < arr->second; ++k) {
                const pmix_info_t &pi = arr->first[k];
                auto num = [&] { return number_of(pi.value); };
                if (is(pi, PMIX_LOCAL_RANK) && num())
                    p.local_rank = static_cast<std::uint32_t>(*num());
                else if (is(pi, PMIX_NODE_RANK) && num())
                    p.node_rank = static_cast<std::uint32_t>(*num());
                else if (is(pi, PMIX_NODEID) && num())
                    p.node_id = static_cast<std::uint32_t>(*num());
                else if (is(pi, PMIX_APPNUM) && num())
                    p.app_num = static_cast<std::uint32_t>(*num());
                else if (is(pi, PMIX_HOSTNAME) && string_of(pi.value))
                    p.hostname = string_of(pi.value);
                else if (is(pi, PMIX_CPUSET) && string_of(pi.value))
                    p.cpuset = string_of(pi.value);
                else if (is(pi, PMIX_LOCALITY_STRING) && string_of(pi.value))
                    p.locality = string_of(pi.value);
                p.others.push_back(&pi);  // also as given: a Get answers the host's value
            }
        } else if (is(i, PMIX_NODE_INFO_ARRAY)) {
            // This node's keys are its clients' job-level keys; another node's are kept by its
            // name for Gets that name the node. The node is named by PMIX_HOSTNAME or PMIX_NODEID.
            auto arr = array_of(i.value);
            if (!arr) continue;
            std::optional<std::string> name;
            for (std::size_t k = 0; k < arr->second; ++k) {
                const pmix_info_t &ni = arr->first[k];
                if (is(ni, PMIX_HOSTNAME) && string_of(ni.value)) {
                    name = string_of(ni.value);
                } else if (is(ni, PMIX_NODEID) && !name) {
                    const auto id = number_of(ni.value);  // no node map: node 0 is this one
                    if (id && nodes.empty() && *id == 0) name = this_node;
                    if (id && *id < nodes.size()) name = nodes[*id];
                }
            }
            if (!name) continue;
            auto &into = *name == this_node ? job_infos : node_infos[*name];
            for (std::size_t k = 0; k < arr->second; ++k)
                if (!is(arr->first[k], PMIX_HOSTNAME) && !is(arr->first[k], PMIX_NODEID))
                    into.push_back(&arr->first[k]);
        } else if (is(i, PMIX_APP_INFO_ARRAY)) {
            auto arr = array_of(i.value);
            if (!arr) continue;
            std::optional<std::uint64_t> app;
            for (std::size_t k = 0; k < arr->second; ++k)
                if (is(arr->first[k], PMIX_APPNUM)) app = number_of(arr->first[k].value);
            if (app && *app == 0)
                for (std::size_t k = 0; k < arr->second; ++k) {
                    if (is(arr->first[k], PMIX_APPNUM)) continue;
                    if (!read_stop(arr->first[k], job, r)) return r;
                    job_infos.push_back(&arr->first[k]);
                }
        } else {
            if (is(i, PMIX_JOB_SIZE)) {
                if (auto v = number_of(i.value)) size = static_cast<std::uint32_t>(*v);
            } else if (is(i, PMIX_UNIV_SIZE)) {
                if (auto v = number_of(i.value)) job.univ_size = static_cast<std::uint32_t>(*v);
            } else if (is(i, PMIX_MAX_PROCS)) {
                if (auto v = number_of(i.value)) job.max_procs = static_cast<std::uint32_t>(*v);
            } else if (is(i, PMIX_JOB_NUM_APPS)) {
                if (auto v = number_of(i.value)) job.num_apps = static_cast<std::uint32_t>(*v);
            } else if (is(i, PMIX_TMPDIR)) {
                if (auto v = string_of(i.value)) job.session_tmpdir = *v;
            } else if (is(i, PMIX_NSDIR)) {
                if (auto v = string_of(i.value)) job.nsdir = *v;
            } else if (is(i, PMIX_PARENT_ID) && i.value.type == PMIX_PROC && i.value.data.proc) {
                job.parent = {i.value.data.proc->nspace, i.value.data.proc->rank};
            } else if (!read_stop(i, job, r)) {
                return r;
            }
            job_infos.push_back(&i);  // also as given
        }
    }
    if (nodes.empty()) nodes.push_back(this_node);
    if (ranks_per_node.empty()) {
        // No map: every rank on this node.
        const std::uint32_t n = size ? *size : static_cast<std::uint32_t>(std::max(nlocalprocs, 0));
        ranks_per_node.assign(nodes.size(), {});
        auto here = std::find(nodes.begin(), nodes.end(), this_node);
        const std::size_t at =
            here == nodes.end() ? 0 : static_cast<std::size_t>(here - nodes.begin());
        for (std::uint32_t rank = 0; rank < n; ++rank) ranks_per_node[at].push_back(rank);
    }
    if (ranks_per_node.size() > nodes.size()) {
        r.error = "PMIX_PROC_MAP names more nodes than PMIX_NODE_MAP";
        return r;
    }
    std::uint32_t total = 0;
    for (const auto &ranks : ranks_per_node) total += static_cast<std::uint32_t>(ranks.size());
    job.size = size ? *size : total;
    if (job.size > msg::kMaxRanks) {
        r.error = "more ranks than PMIx's 16-bit local ranks allow";
        return r;
    }
    job.nodes = nodes;
    job.procs.resize(job.size);
    for (std::uint32_t rank = 0; rank < job.size; ++rank) job.procs[rank].rank = rank;
    for (std::uint32_t node = 0; node < ranks_per_node.size(); ++node)
        for (std::size_t local = 0; local < ranks_per_node[node].size(); ++local) {
            const std::uint32_t rank = ranks_per_node[node][local];
            if (rank >= job.size) {
                r.error = "PMIX_PROC_MAP names rank " + std::to_string(rank) + " of a job of " +
                          std::to_string(job.size);
                return r;
            }
            msg::ProcInfo &p = job.procs[rank];
            p.node_id = node;
            p.hostname = nodes[node];
            p.local_rank = p.node_rank = static_cast<std::uint16_t>(local);
        }
    for (auto &[rank, d] : procs) {
        if (rank >= job.size) continue;
        msg::ProcInfo &p = job.procs[rank];
        if (d.node_id && *d.node_id < nodes.size()) {
            p.node_id = *d.node_id;
            p.hostname = nodes[p.node_id];
        }
        if (d.hostname) p.hostname = *d.hostname;
        if (d.local_rank) p.local_rank = static_cast<std::uint16_t>(*d.local_rank);
        if (d.node_rank) p.node_rank = static_cast<std::uint16_t>(*d.node_rank);
        if (d.app_num) p.app_num = *d.app_num;
        if (d.cpuset) p.cpuset = *d.cpuset;
        if (d.locality) p.locality = *d.locality;
        if (!d.others.empty()) job.proc_infos[std::to_string(rank)] = encode(d.others);
    }
    job.job_infos = encode(job_infos);
    for (const auto &[name, infos] : node_infos)
        if (auto blob = encode(infos); !blob.empty()) job.node_infos[name] = std::move(blob);
    return r;
}

}  // namespace zpmix::server
