#pragma once
// ClientStore: what a client process knows without asking anyone: its job's information (from
// the Welcome), other namespaces' job information (fetched from the broker once each), the data
// fences and direct-modex Gets brought in, and its own puts. API threads read it directly under a
// shared lock (a cached PMIx_Get costs a hash lookup and a value copy); the client's progress
// thread and PMIx_Put write it under the exclusive lock.
//
// Every value of a process's data remembers the scope it was put with (PMIX_LOCAL, PMIX_REMOTE,
// PMIX_GLOBAL as the broker tagged it, PMIX_INTERNAL for PMIx_Store_internal and the caller's
// own internal puts), for a Get that names PMIX_DATA_SCOPE. Whatever is in the store is what the
// caller may see: the broker hands a reader only the scopes meant for its node.
//
// A fence segment's data is not decoded when the fence completes: each other participant's entry
// points into the mapped segment, and the first Get of that participant decodes it (under the
// exclusive lock, once). A fence on the job's fence board leaves each participant's card on the
// board, copied and decoded the same way on the first Get. A later segment's snapshot of a
// participant replaces an unread earlier one (a commit carries everything its process put);
// anything else written for a participant (direct modex, PMIx_Store_internal) first decodes its
// unread snapshot, so the later write wins.
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <pmix_common.h>
#include <msgpack.hpp>

#include "actors/protocol/job.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/runtime/envelope.hpp"

namespace zpmix {
class FenceBoard;
class FenceSegment;
}  // namespace zpmix

namespace zpmix::client {

// A pmix_value_t the store owns, and the scope it was put with (PMIX_SCOPE_UNDEF for job info).
struct StoredValue {
    pmix_value_t v{};
    pmix_scope_t scope = PMIX_SCOPE_UNDEF;
    StoredValue() = default;
    StoredValue(StoredValue &&o) noexcept : v(o.v), scope(o.scope) { o.v = pmix_value_t{}; }
    StoredValue &operator=(StoredValue &&o) noexcept;
    ~StoredValue();
};

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};
using ValueMap = std::unordered_map<std::string, StoredValue, StringHash, std::equal_to<>>;

class ClientStore {
  public:
    // The caller's own job: job-level values are computed once here.
    void set_job(const msg::JobInfo &job, std::uint32_t my_rank);
    // Another namespace's job (after set_job): its node-level values are the caller's node's.
    void add_job(const msg::JobInfo &job);
    // Whether the job information of `nspace` is here.
    bool has_job(std::string_view nspace) const;

    // A copy of the value (PMIX_VALUE_RELEASE frees it): PMIX_ERR_NOT_FOUND when not cached,
    // PMIX_ERR_UNPACK_FAILURE when the key is not there and the owner's fence data (decoded on
    // this first read) is malformed.
    pmix_status_t get(std::string_view nspace, std::uint32_t rank, std::string_view key,
                      pmix_value_t **out);
    // Everything here that the process put (or PMIx_Store_internal stored for it), as one
    // PMIX_DATA_ARRAY of PMIX_INFO: PMIx_Get with a NULL key. PMIX_ERR_NOT_FOUND when nothing is.
    pmix_status_t get_all(std::string_view nspace, std::uint32_t rank, pmix_value_t **out);
    // The same for a process's data put with `scope` only (PMIX_DATA_SCOPE).
    pmix_status_t get_scoped(std::string_view nspace, std::uint32_t rank, std::string_view key,
                             pmix_scope_t scope, pmix_value_t **out);

    // Own data: kept for PMIx_Commit (scope LOCAL/REMOTE/GLOBAL) and readable locally at once.
    pmix_status_t put(pmix_scope_t scope, const char *key, const pmix_value_t *value);
    // Everything put so far with a shared scope, as the Commit message's blobs.
    void commit_blobs(msg::Commit &out) const;
    // PMIx_Store_internal: a value for any process, local to this client.
    pmix_status_t store(std::string_view nspace, std::uint32_t rank, const char *key,
                        const pmix_value_t *value);
    // Data brought in by a fence or direct modex (replaces the keys it carries). Returns
    // PMIX_ERR_UNPACK_FAILURE (and keeps what decoded) when a blob is malformed.
    pmix_status_t add(const msg::ProcData &data);
    // The same from the broker's answer to a direct-modex Get (a ModexData);
    // PMIX_ERR_UNPACK_FAILURE when it is not one.
    pmix_status_t add_modex_data(const Envelope &answer);
    // Data brought in by a fence segment: every participant's but the caller's own (its own puts
    // are here already, and newer), left undecoded until read.
    void add_segment(std::shared_ptr<const FenceSegment> segment);
    // After a collecting fence on the caller's job's fence board: each of `ranks` has a card there,
    // read off the board (its latest card, never older than the fence's) on its first Get.
    void add_cards(std::shared_ptr<const FenceBoard> board,
                   const std::vector<std::uint32_t> &ranks);
    void forget(std::string_view nspace, std::uint32_t rank);

    // For PMIx_Resolve_peers / PMIx_Resolve_nodes: a job (copied under the lock).
    bool job_of(std::string_view nspace, msg::JobInfo &out) const;
    std::uint32_t job_size() const;

  private:
    // What is known of one process: decoded values, and perhaps a snapshot not read yet.
    struct Proc {
        ValueMap values;
        std::shared_ptr<const FenceSegment> segment;  // set while `unread` is
        std::string_view unread;                      // its data in the segment
        std::shared_ptr<const FenceBoard> board;      // set while its card there is unread
    };
    struct Namespace {
        bool has_job = false;
        msg::JobInfo job;
        std::uint32_t my_node = 0;
        ValueMap job_values;
        std::unordered_map<std::uint32_t, Proc> procs;
        // What a host registered for each rank (JobInfo.proc_infos), job information.
        std::unordered_map<std::uint32_t, ValueMap> host_procs;
    };
    using Namespaces = std::unordered_map<std::string, Namespace, StringHash, std::equal_to<>>;

    // A namespace's job-level values, with the node-level ones of node `my_node` (none when the
    // job has no process there).
    static Namespace make_namespace(const msg::JobInfo &job, std::uint32_t my_node);
    // Installs ns as the job of its namespace, keeping the process data stored before.
    void install(Namespace ns);
    // Per-process job information of any rank, computed from its ProcInfo.
    static bool proc_value(const Namespace &ns, std::uint32_t rank, std::string_view key,
                           pmix_value_t *out);
    // Runs look(namespace, proc or nullptr) under the shared lock; when the process has an unread
    // snapshot, decodes it first under the exclusive lock. look's status, or the decoding's when
    // look found nothing.
    template <class Look>
    pmix_status_t read(std::string_view nspace, std::uint32_t rank, Look look);
    // Decodes a proc's unread snapshot into its values (under the exclusive lock).
    static pmix_status_t read_unread(std::string_view nspace, std::uint32_t rank, Proc &proc);

    mutable std::shared_mutex mu_;
    Namespaces namespaces_;
    std::string my_nspace_;
    std::uint32_t my_rank_ = 0;
    // Own puts by scope, each key -> packed [type, payload].
    std::map<std::string, msgpack::sbuffer> puts_[3];  // local, remote, global
};

}  // namespace zpmix::client
