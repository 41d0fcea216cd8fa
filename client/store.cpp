#include "client/store.hpp"
#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <pmix.h>
#include <spdlog/spdlog.h>

#include "actors/protocol/shm/fence_board.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/runtime/envelope.hpp"
#include "client/values/value_codec.hpp"

namespace zpmix::client {

StoredValue::~StoredValue() {
    c::value_destruct(&v);
}
StoredValue &StoredValue::operator=(StoredValue &&o) noexcept {
    if (this != &o) {
        c::value_destruct(&v);
        v = o.v;
        scope = o.scope;
        o.v = pmix_value_t{};
    }
    return *this;
}

namespace {

void set(ValueMap &m, const char *key, const void *data, pmix_data_type_t type) {
    StoredValue sv;
    if (c::value_load(&sv.v, data, type) == PMIX_SUCCESS) m.insert_or_assign(key, std::move(sv));
}
void set_u32(ValueMap &m, const char *key, std::uint32_t v) {
    set(m, key, &v, PMIX_UINT32);
}
void set_str(ValueMap &m, const char *key, const std::string &s) {
    set(m, key, s.c_str(), PMIX_STRING);
}

template <class Range, class Fn>
std::string join(const Range &r, char sep, Fn fn) {
    std::string out;
    for (const auto &x : r) {
        if (!out.empty()) out += sep;
        out += fn(x);
    }
    return out;
}

// About the packed size of a value: a buffer this big rarely grows, and is not much too big.
std::size_t packed_size_hint(const pmix_value_t &v) {
    switch (v.type) {
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            return v.data.bo.size + 16;
        case PMIX_STRING:
            return (v.data.string ? std::strlen(v.data.string) : 0) + 16;
        default:
            return 64;
    }
}

// Appends to a blob, for a msgpack::packer.
struct BlobStream {
    msg::Blob &out;
    void write(const char *data, std::size_t size) { out.insert(out.end(), data, data + size); }
};

pmix_value_t *copy_of(const pmix_value_t &v) {
    auto *out = static_cast<pmix_value_t *>(c::array_create(PMIX_VALUE, 1));
    if (out == nullptr) return nullptr;
    if (c::value_xfer(out, &v) != PMIX_SUCCESS) {
        c::array_free(PMIX_VALUE, out, 1);
        return nullptr;
    }
    return out;
}

// Decodes the entries of a msgpack map key -> [type, payload] put with `scope` into `out`:
// PMIX_ERR_UNPACK_FAILURE (keeping what decoded) when a value does not decode; throws DecodeError
// when `map` is not such a map.
pmix_status_t decode_entries(const msgpack::object &map, pmix_scope_t scope,
                             std::vector<std::pair<std::string, StoredValue>> &out) {
    if (map.type != msgpack::type::MAP) throw DecodeError("not a map");
    pmix_status_t status = PMIX_SUCCESS;
    for (const auto &kv : map.via.map) {
        if (kv.key.type != msgpack::type::STR) throw DecodeError("key not a string");
        StoredValue sv;
        if (c::decode_value(kv.val, &sv.v) != PMIX_SUCCESS) {
            status = PMIX_ERR_UNPACK_FAILURE;
            continue;
        }
        sv.scope = scope;
        out.emplace_back(kv.key.as<std::string>(), std::move(sv));
    }
    return status;
}

// A data blob (one such map) put with `scope`; PMIX_ERR_UNPACK_FAILURE when it is malformed.
pmix_status_t decode_map(const char *data, std::size_t size, pmix_scope_t scope,
                         std::vector<std::pair<std::string, StoredValue>> &out) {
    try {
        auto handle = unpack_bounded(data, size, {}, true);  // decode_value copies what it keeps
        return decode_entries(handle.get(), scope, out);
    } catch (const std::exception &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
}

// One process's data in a fence segment: an array of [scope, map] (fence_segment.hpp).
pmix_status_t decode_proc_data(std::string_view data,
                               std::vector<std::pair<std::string, StoredValue>> &out) {
    pmix_status_t status = PMIX_SUCCESS;
    try {
        auto handle = unpack_bounded(data.data(), data.size(), {}, true);
        const msgpack::object &blobs = handle.get();
        if (blobs.type != msgpack::type::ARRAY) throw DecodeError("not an array");
        for (const auto &b : blobs.via.array) {
            if (b.type != msgpack::type::ARRAY || b.via.array.size != 2 ||
                b.via.array.ptr[0].type != msgpack::type::POSITIVE_INTEGER)
                throw DecodeError("not a [scope, map] pair");
            const auto scope = static_cast<pmix_scope_t>(b.via.array.ptr[0].via.u64);
            if (decode_entries(b.via.array.ptr[1], scope, out) != PMIX_SUCCESS)
                status = PMIX_ERR_UNPACK_FAILURE;
        }
    } catch (const std::exception &) {
        status = PMIX_ERR_UNPACK_FAILURE;
    }
    return status;
}

// The per-process keys answered from a rank's ProcInfo.
enum class ProcKey {
    rank,
    global_rank,
    app_rank,
    local_rank,
    node_rank,
    nodeid,
    hostname,
    locality,
    cpuset,
    appnum,
    pid,
    procdir,
    procid,
    pset_name
};
const std::unordered_map<std::string_view, ProcKey> kProcKeys = {
    {PMIX_RANK, ProcKey::rank},           {PMIX_GLOBAL_RANK, ProcKey::global_rank},
    {PMIX_APP_RANK, ProcKey::app_rank},   {PMIX_LOCAL_RANK, ProcKey::local_rank},
    {PMIX_NODE_RANK, ProcKey::node_rank}, {PMIX_NODEID, ProcKey::nodeid},
    {PMIX_HOSTNAME, ProcKey::hostname},   {PMIX_LOCALITY_STRING, ProcKey::locality},
    {PMIX_CPUSET, ProcKey::cpuset},       {PMIX_APPNUM, ProcKey::appnum},
    {PMIX_PROC_PID, ProcKey::pid},        {PMIX_PROCDIR, ProcKey::procdir},
    {PMIX_PROCID, ProcKey::procid},       {PMIX_PSET_NAME, ProcKey::pset_name},
};

// PMIX_APPLDR and PMIX_APP_SIZE of app `app`: its ranks are consecutive, the leader the first.
void set_app_keys(ValueMap &m, const msg::JobInfo &job, std::uint32_t app) {
    pmix_rank_t leader = 0;
    std::uint32_t size = 0;
    for (const auto &p : job.procs) {
        if (p.app_num != app) continue;
        if (size++ == 0) leader = p.rank;
    }
    if (job.procs.empty()) size = job.size;
    set(m, PMIX_APPLDR, &leader, PMIX_PROC_RANK);
    set_u32(m, PMIX_APP_SIZE, size);
}

}  // namespace

void ClientStore::set_job(const msg::JobInfo &job, std::uint32_t my_rank) {
    Namespace ns = make_namespace(job, my_rank < job.procs.size() ? job.procs[my_rank].node_id : 0);
    if (my_rank < job.procs.size()) set_app_keys(ns.job_values, job, job.procs[my_rank].app_num);
    std::unique_lock lock(mu_);
    my_nspace_ = job.nspace;
    my_rank_ = my_rank;
    install(std::move(ns));
}

void ClientStore::add_job(const msg::JobInfo &job) {
    std::string my_host;
    {
        std::shared_lock lock(mu_);
        if (job.nspace == my_nspace_) return;  // the own job comes from the Welcome only
        if (auto own = namespaces_.find(my_nspace_);
            own != namespaces_.end() && my_rank_ < own->second.job.procs.size())
            my_host = own->second.job.procs[my_rank_].hostname;
    }
    // The caller's node is the job's node of the same name, if the job has one there.
    auto node = std::find(job.nodes.begin(), job.nodes.end(), my_host);
    Namespace ns = make_namespace(job, static_cast<std::uint32_t>(node - job.nodes.begin()));
    std::unique_lock lock(mu_);
    install(std::move(ns));
}

void ClientStore::install(Namespace ns) {
    auto &slot = namespaces_[ns.job.nspace];
    ns.procs = std::move(slot.procs);  // keep what was stored before the job was known
    slot = std::move(ns);
}

bool ClientStore::has_job(std::string_view nspace) const {
    std::shared_lock lock(mu_);
    auto ns = namespaces_.find(nspace);
    return ns != namespaces_.end() && ns->second.has_job;
}

namespace {
// Infos encoded by the value codec into `m` (a host's registration); what does not decode is
// logged and left out.
void add_host_infos(ValueMap &m, const msg::Blob &blob) {
    if (blob.empty()) return;
    pmix_info_t *infos = nullptr;
    std::size_t n = 0;
    if (c::decode_infos(blob.data(), blob.size(), &infos, &n) != PMIX_SUCCESS) {
        spdlog::warn("pmix client: the host's job information does not decode");
        return;
    }
    for (std::size_t i = 0; i < n; ++i) {
        StoredValue sv;
        if (c::value_xfer(&sv.v, &infos[i].value) == PMIX_SUCCESS)
            m.insert_or_assign(std::string(infos[i].key, strnlen(infos[i].key, PMIX_MAX_KEYLEN)),
                               std::move(sv));
    }
    c::array_free(PMIX_INFO, infos, n);
}
}  // namespace

ClientStore::Namespace ClientStore::make_namespace(const msg::JobInfo &job, std::uint32_t my_node) {
    Namespace ns;
    ns.has_job = true;
    ns.job = job;
    ns.my_node = my_node;
    ValueMap &m = ns.job_values;
    set_u32(m, PMIX_JOB_SIZE, job.size);
    set_u32(m, PMIX_UNIV_SIZE, job.univ_size ? job.univ_size : job.size);
    set_u32(m, PMIX_MAX_PROCS, job.max_procs ? job.max_procs : job.size);
    set_u32(m, PMIX_JOB_NUM_APPS, job.num_apps);
    set_str(m, PMIX_NSPACE, job.nspace);
    set_str(m, PMIX_JOBID, job.nspace);
    if (!job.session_tmpdir.empty()) set_str(m, PMIX_TMPDIR, job.session_tmpdir);
    if (!job.nsdir.empty()) set_str(m, PMIX_NSDIR, job.nsdir);
    if (!job.session_tmpdir.empty()) {
        bool rm_cleans = true;  // the launcher removes the session directories at the job's end
        set(m, PMIX_TDIR_RMCLEAN, &rm_cleans, PMIX_BOOL);
    }
    set_u32(m, PMIX_NUM_NODES, static_cast<std::uint32_t>(job.nodes.size()));
    const std::string nodes = join(job.nodes, ',', [](const std::string &s) { return s; });
    set_str(m, PMIX_NODE_LIST, nodes);
    set_str(m, PMIX_NODE_MAP, nodes);
    // PMIX_PROC_MAP: per node (in node-id order) the comma list of its ranks, ';' between nodes.
    std::vector<std::vector<std::uint32_t>> by_node(job.nodes.size());
    for (const auto &p : job.procs)
        if (p.node_id < by_node.size()) by_node[p.node_id].push_back(p.rank);
    set_str(m, PMIX_PROC_MAP, join(by_node, ';', [](const std::vector<std::uint32_t> &ranks) {
                return join(ranks, ',', [](std::uint32_t r) { return std::to_string(r); });
            }));
    // Node-level keys of the caller's node.
    const std::vector<std::uint32_t> local =
        ns.my_node < by_node.size() ? by_node[ns.my_node] : std::vector<std::uint32_t>{};
    set_u32(m, PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local.size()));
    set_u32(m, PMIX_NODE_SIZE, static_cast<std::uint32_t>(local.size()));
    // Another job with no rank here has no local peers: not an empty list, which Open MPI 4.1
    // splits into no array and then reads (MPI_Comm_spawn onto other nodes crashed on it).
    if (!local.empty()) {
        set_str(m, PMIX_LOCAL_PEERS,
                join(local, ',', [](std::uint32_t r) { return std::to_string(r); }));
        pmix_rank_t leader = *std::min_element(local.begin(), local.end());
        set(m, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    }
    set_app_keys(m, job, 0);  // the own job's are the caller's app's (set_job)
    // A job PMIx_Spawn started knows its spawner.
    const bool spawned = !job.parent.nspace.empty();
    set(m, PMIX_SPAWNED, &spawned, PMIX_BOOL);
    if (spawned) {
        pmix_proc_t parent;
        c::load_proc(&parent, job.parent.nspace.c_str(), job.parent.rank);
        set(m, PMIX_PARENT_ID, &parent, PMIX_PROC);
    }
    if (ns.my_node < job.nodes.size()) {
        set_str(m, PMIX_HOSTNAME, job.nodes[ns.my_node]);
        set_u32(m, PMIX_NODEID, ns.my_node);
    }
    if (job.recoverable) set(m, PMIX_JOB_RECOVERABLE, &job.recoverable, PMIX_BOOL);
    if (job.stop_in_init) set(m, PMIX_DEBUG_STOP_IN_INIT, &job.stop_in_init, PMIX_BOOL);
    if (job.stop_in_app) set(m, PMIX_DEBUG_STOP_IN_APP, &job.stop_in_app, PMIX_BOOL);
    if (job.stop_on_exec) set(m, PMIX_DEBUG_STOP_ON_EXEC, &job.stop_on_exec, PMIX_BOOL);
    if (!job.debug_target.nspace.empty()) {
        pmix_proc_t target;
        c::load_proc(&target, job.debug_target.nspace.c_str(), job.debug_target.rank);
        set(m, PMIX_DEBUG_TARGET, &target, PMIX_PROC);
        // Its namespace alone too: OpenPMIx's debuggerd example reads PMIX_DEBUG_JOB.
        set(m, PMIX_DEBUG_JOB, job.debug_target.nspace.c_str(), PMIX_STRING);
    }
    if (!job.psets.empty()) {
        std::vector<char *> names;
        for (const auto &[name, ranks] : job.psets)
            names.push_back(const_cast<char *>(name.c_str()));
        pmix_data_array_t arr{PMIX_STRING, names.size(), names.data()};
        set(m, PMIX_PSET_NAMES, &arr, PMIX_DATA_ARRAY);
    }
    // A host's own keys, job-level and per rank (they win over what was computed above).
    add_host_infos(m, job.job_infos);
    for (const auto &[rank, blob] : job.proc_infos) {
        char *end = nullptr;
        const unsigned long r = std::strtoul(rank.c_str(), &end, 10);
        if (end != rank.c_str() && *end == '\0')
            add_host_infos(ns.host_procs[static_cast<std::uint32_t>(r)], blob);
    }
    return ns;
}

bool ClientStore::proc_value(const Namespace &ns, std::uint32_t rank, std::string_view key,
                             pmix_value_t *out) {
    if (!ns.has_job || rank >= ns.job.procs.size()) return false;
    auto k = kProcKeys.find(key);
    if (k == kProcKeys.end()) return false;
    const msg::ProcInfo &p = ns.job.procs[rank];
    switch (k->second) {
        case ProcKey::rank:
        case ProcKey::global_rank:
            return c::value_load(out, &rank, PMIX_PROC_RANK) == PMIX_SUCCESS;
        case ProcKey::app_rank: {
            pmix_rank_t first = rank;
            while (first > 0 && ns.job.procs[first - 1].app_num == p.app_num) --first;
            pmix_rank_t r = rank - first;
            return c::value_load(out, &r, PMIX_PROC_RANK) == PMIX_SUCCESS;
        }
        case ProcKey::local_rank:
            return c::value_load(out, &p.local_rank, PMIX_UINT16) == PMIX_SUCCESS;
        case ProcKey::node_rank:
            return c::value_load(out, &p.node_rank, PMIX_UINT16) == PMIX_SUCCESS;
        case ProcKey::nodeid:
            return c::value_load(out, &p.node_id, PMIX_UINT32) == PMIX_SUCCESS;
        case ProcKey::appnum:
            return c::value_load(out, &p.app_num, PMIX_UINT32) == PMIX_SUCCESS;
        case ProcKey::hostname:
            return c::value_load(out, p.hostname.c_str(), PMIX_STRING) == PMIX_SUCCESS;
        case ProcKey::locality:
            return !p.locality.empty() &&
                   c::value_load(out, p.locality.c_str(), PMIX_STRING) == PMIX_SUCCESS;
        case ProcKey::cpuset:
            return !p.cpuset.empty() &&
                   c::value_load(out, p.cpuset.c_str(), PMIX_STRING) == PMIX_SUCCESS;
        case ProcKey::pid: {
            if (p.pid == 0) return false;
            pid_t pid = static_cast<pid_t>(p.pid);
            return c::value_load(out, &pid, PMIX_PID) == PMIX_SUCCESS;
        }
        case ProcKey::procdir: {
            if (ns.job.nsdir.empty()) return false;
            const std::string dir = ns.job.nsdir + "/" + std::to_string(rank);
            return c::value_load(out, dir.c_str(), PMIX_STRING) == PMIX_SUCCESS;
        }
        case ProcKey::procid: {
            pmix_proc_t proc;
            c::load_proc(&proc, ns.job.nspace.c_str(), rank);
            return c::value_load(out, &proc, PMIX_PROC) == PMIX_SUCCESS;
        }
        case ProcKey::pset_name:  // the first (by name) of the launch's sets that holds it
            for (const auto &[name, ranks] : ns.job.psets)
                if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end())
                    return c::value_load(out, name.c_str(), PMIX_STRING) == PMIX_SUCCESS;
            return false;
    }
    return false;
}

template <class Look>
pmix_status_t ClientStore::read(std::string_view nspace, std::uint32_t rank, Look look) {
    {
        std::shared_lock lock(mu_);
        auto ns = namespaces_.find(nspace);
        if (ns == namespaces_.end()) return PMIX_ERR_NOT_FOUND;
        auto p = ns->second.procs.find(rank);
        const Proc *proc = p == ns->second.procs.end() ? nullptr : &p->second;
        if (!proc || (!proc->segment && !proc->board)) return look(ns->second, proc);
    }
    // The first read of this process's fence data: decode it, once.
    std::unique_lock lock(mu_);
    auto ns = namespaces_.find(nspace);
    if (ns == namespaces_.end()) return PMIX_ERR_NOT_FOUND;
    auto p = ns->second.procs.find(rank);
    Proc *proc = p == ns->second.procs.end() ? nullptr : &p->second;
    const pmix_status_t decoded = proc ? read_unread(nspace, rank, *proc) : PMIX_SUCCESS;
    const pmix_status_t rc = look(ns->second, proc);
    return rc == PMIX_ERR_NOT_FOUND && decoded != PMIX_SUCCESS ? decoded : rc;
}

pmix_status_t ClientStore::get(std::string_view nspace, std::uint32_t rank, std::string_view key,
                               pmix_value_t **out) {
    return read(nspace, rank, [&](const Namespace &n, const Proc *proc) {
        if (proc) {
            if (auto v = proc->values.find(key); v != proc->values.end()) {
                *out = copy_of(v->second.v);
                return *out ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
            }
        }
        if (auto h = n.host_procs.find(rank); h != n.host_procs.end())
            if (auto v = h->second.find(key); v != h->second.end()) {
                *out = copy_of(v->second.v);
                return *out ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
            }
        if (rank != PMIX_RANK_WILDCARD && n.has_job && rank < n.job.procs.size() &&
            kProcKeys.contains(key)) {
            pmix_value_t *v = nullptr;
            v = static_cast<pmix_value_t *>(c::array_create(PMIX_VALUE, 1));
            if (v == nullptr) return PMIX_ERR_NOMEM;
            if (proc_value(n, rank, key, v)) {
                *out = v;
                return PMIX_SUCCESS;
            }
            c::array_free(PMIX_VALUE, v, 1);
        }
        // Job-level keys, also answered for a specific rank.
        if (auto v = n.job_values.find(key); v != n.job_values.end()) {
            *out = copy_of(v->second.v);
            return *out ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
        }
        return PMIX_ERR_NOT_FOUND;
    });
}

pmix_status_t ClientStore::get_all(std::string_view nspace, std::uint32_t rank,
                                   pmix_value_t **out) {
    return read(nspace, rank, [&](const Namespace &, const Proc *proc) {
        if (!proc || proc->values.empty()) return PMIX_ERR_NOT_FOUND;
        const std::size_t n = proc->values.size();
        auto *infos = static_cast<pmix_info_t *>(c::array_create(PMIX_INFO, n));
        auto *v = static_cast<pmix_value_t *>(c::array_create(PMIX_VALUE, 1));
        if (infos == nullptr || v == nullptr) {
            if (infos) c::array_free(PMIX_INFO, infos, n);
            if (v) c::array_free(PMIX_VALUE, v, 1);
            return PMIX_ERR_NOMEM;
        }
        std::size_t i = 0;
        for (const auto &[key, sv] : proc->values) {
            key.copy(infos[i].key, PMIX_MAX_KEYLEN);  // the array is zeroed: terminated
            if (pmix_status_t rc = c::value_xfer(&infos[i].value, &sv.v); rc != PMIX_SUCCESS) {
                c::array_free(PMIX_INFO, infos, n);
                c::array_free(PMIX_VALUE, v, 1);
                return rc;
            }
            ++i;
        }
        auto *arr = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
        if (arr == nullptr) {
            c::array_free(PMIX_INFO, infos, n);
            c::array_free(PMIX_VALUE, v, 1);
            return PMIX_ERR_NOMEM;
        }
        *arr = pmix_data_array_t{PMIX_INFO, n, infos};
        v->type = PMIX_DATA_ARRAY;
        v->data.darray = arr;
        *out = v;
        return PMIX_SUCCESS;
    });
}

pmix_status_t ClientStore::get_scoped(std::string_view nspace, std::uint32_t rank,
                                      std::string_view key, pmix_scope_t scope,
                                      pmix_value_t **out) {
    return read(nspace, rank, [&](const Namespace &, const Proc *proc) {
        if (!proc) return PMIX_ERR_NOT_FOUND;
        auto v = proc->values.find(key);
        if (v == proc->values.end() || v->second.scope != scope) return PMIX_ERR_NOT_FOUND;
        *out = copy_of(v->second.v);
        return *out ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    });
}

pmix_status_t ClientStore::put(pmix_scope_t scope, const char *key, const pmix_value_t *value) {
    if (scope < PMIX_LOCAL || scope > PMIX_INTERNAL) return PMIX_ERR_BAD_PARAM;
    msgpack::sbuffer packed(scope != PMIX_INTERNAL ? packed_size_hint(*value) : 0);
    if (scope != PMIX_INTERNAL) {
        c::Packer pk(packed);
        if (pmix_status_t rc = c::encode_value(pk, *value); rc != PMIX_SUCCESS) return rc;
    }
    StoredValue sv;
    if (pmix_status_t rc = c::value_xfer(&sv.v, value); rc != PMIX_SUCCESS) return rc;
    sv.scope = scope;
    std::unique_lock lock(mu_);
    if (scope != PMIX_INTERNAL) {
        // A key lives in one scope: a later put in another scope moves it.
        for (auto &m : puts_) m.erase(key);
        puts_[scope - PMIX_LOCAL].insert_or_assign(key, std::move(packed));
    }
    namespaces_[my_nspace_].procs[my_rank_].values.insert_or_assign(key, std::move(sv));
    return PMIX_SUCCESS;
}

void ClientStore::commit_blobs(msg::Commit &out) const {
    std::shared_lock lock(mu_);
    out.proc = {my_nspace_, my_rank_};
    msg::Blob *blobs[3] = {&out.local, &out.remote, &out.global};
    for (int s = 0; s < 3; ++s) {
        if (puts_[s].empty()) continue;
        // Sized up front and written in place: a big card is copied once here, once into the
        // message.
        std::size_t size = 5;
        for (const auto &[key, packed] : puts_[s]) size += 5 + key.size() + packed.size();
        msg::Blob &blob = *blobs[s];
        blob.reserve(size);
        BlobStream stream{blob};
        msgpack::packer<BlobStream> pk(stream);
        pk.pack_map(static_cast<std::uint32_t>(puts_[s].size()));
        for (const auto &[key, packed] : puts_[s]) {
            pk.pack(key);
            stream.write(packed.data(), packed.size());
        }
    }
}

pmix_status_t ClientStore::store(std::string_view nspace, std::uint32_t rank, const char *key,
                                 const pmix_value_t *value) {
    StoredValue sv;
    if (pmix_status_t rc = c::value_xfer(&sv.v, value); rc != PMIX_SUCCESS) return rc;
    sv.scope = PMIX_INTERNAL;  // never leaves this process
    std::unique_lock lock(mu_);
    auto ns = namespaces_.find(nspace);
    if (ns == namespaces_.end()) ns = namespaces_.emplace(std::string(nspace), Namespace{}).first;
    Proc &proc = ns->second.procs[rank];
    (void)read_unread(nspace, rank, proc);  // older than this value
    proc.values.insert_or_assign(key, std::move(sv));
    return PMIX_SUCCESS;
}

pmix_status_t ClientStore::add(const msg::ProcData &data) {
    pmix_status_t status = PMIX_SUCCESS;
    std::vector<std::pair<std::string, StoredValue>> values;
    for (std::size_t b = 0; b < data.blobs.size(); ++b) {
        const pmix_scope_t scope = b < data.scopes.size() ? data.scopes[b] : PMIX_SCOPE_UNDEF;
        const msg::Blob &blob = data.blobs[b];
        if (pmix_status_t rc = decode_map(blob.data(), blob.size(), scope, values);
            rc != PMIX_SUCCESS)
            status = rc;
    }
    std::unique_lock lock(mu_);
    auto ns = namespaces_.find(data.proc.nspace);
    if (ns == namespaces_.end()) ns = namespaces_.emplace(data.proc.nspace, Namespace{}).first;
    Proc &proc = ns->second.procs[data.proc.rank];
    (void)read_unread(data.proc.nspace, data.proc.rank, proc);  // older than this data
    for (auto &[key, sv] : values) proc.values.insert_or_assign(std::move(key), std::move(sv));
    return status;
}

pmix_status_t ClientStore::add_modex_data(const Envelope &answer) {
    try {
        return add(answer.as<msg::ModexData>().data);
    } catch (const DecodeError &e) {
        spdlog::error("pmix client: a direct-modex answer: {}", e.what());
        return PMIX_ERR_UNPACK_FAILURE;
    }
}

void ClientStore::add_segment(std::shared_ptr<const FenceSegment> segment) {
    std::unique_lock lock(mu_);
    Namespaces::iterator ns = namespaces_.end();
    for (const auto &e : segment->entries()) {
        if (e.rank == my_rank_ && e.nspace == my_nspace_) continue;
        if (ns == namespaces_.end() || ns->first != e.nspace) {
            ns = namespaces_.find(e.nspace);
            if (ns == namespaces_.end()) ns = namespaces_.emplace(e.nspace, Namespace{}).first;
        }
        Proc &proc = ns->second.procs[e.rank];
        proc.segment = segment;
        proc.unread = e.data;
        proc.board.reset();
    }
}

void ClientStore::add_cards(std::shared_ptr<const FenceBoard> board,
                            const std::vector<std::uint32_t> &ranks) {
    std::unique_lock lock(mu_);
    auto ns = namespaces_.find(my_nspace_);
    if (ns == namespaces_.end()) return;
    for (std::uint32_t r : ranks) {
        Proc &proc = ns->second.procs[r];
        proc.board = board;
        proc.segment.reset();
        proc.unread = {};
    }
}

pmix_status_t ClientStore::read_unread(std::string_view nspace, std::uint32_t rank, Proc &proc) {
    std::string card;
    if (proc.board) {
        const FenceBoard::Card c = proc.board->read_card(rank, card);
        proc.board.reset();
        // Grown too big for the board since the fence: the Get asks the broker.
        if (c.too_big) return PMIX_SUCCESS;
        proc.unread = card;
    } else if (!proc.segment) {
        return PMIX_SUCCESS;
    }
    std::vector<std::pair<std::string, StoredValue>> values;
    const pmix_status_t status = decode_proc_data(proc.unread, values);
    if (status != PMIX_SUCCESS)
        spdlog::error("pmix client: the fence data of {}:{} is malformed", nspace, rank);
    for (auto &[key, sv] : values) proc.values.insert_or_assign(std::move(key), std::move(sv));
    proc.segment.reset();
    proc.unread = {};
    return status;
}

void ClientStore::forget(std::string_view nspace, std::uint32_t rank) {
    std::unique_lock lock(mu_);
    if (auto ns = namespaces_.find(nspace); ns != namespaces_.end()) ns->second.procs.erase(rank);
}

bool ClientStore::job_of(std::string_view nspace, msg::JobInfo &out) const {
    std::shared_lock lock(mu_);
    auto ns = namespaces_.find(nspace);
    if (ns == namespaces_.end() || !ns->second.has_job) return false;
    out = ns->second.job;
    return true;
}

std::uint32_t ClientStore::job_size() const {
    std::shared_lock lock(mu_);
    auto ns = namespaces_.find(my_nspace_);
    return ns == namespaces_.end() ? 0 : ns->second.job.size;
}

}  // namespace zpmix::client
