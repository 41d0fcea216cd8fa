#pragma once
// What a job's processes asked the broker to remove when they end (PMIX_REGISTER_CLEANUP,
// PMIX_REGISTER_CLEANUP_DIR with PMIX_CLEANUP_RECURSIVE, _EMPTY, _IGNORE, _LEAVE_TOPDIR). Open MPI
// registers its shared-memory segments in /dev/shm this way; a rank that aborts leaves them
// otherwise.
//
// Only what the registering uid owns is removed: each path is checked with lstat when it is
// registered (if it exists) and again when it is removed, and symbolic links are removed, never
// followed. A list is bounded (kMaxRules), so that a process cannot grow the broker without limit.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace zpmix {

struct CleanupRule {
    std::string path;  // absolute
    bool dir = false;  // PMIX_REGISTER_CLEANUP_DIR
    bool recursive = false;
    bool empty_only = false;          // only empty subdirectories go, files stay
    bool leave_topdir = false;        // the directory itself stays
    std::vector<std::string> ignore;  // file names that stay, at any depth
};

class CleanupList {
  public:
    static constexpr std::size_t kMaxRules = 256;

    // Why the rule is refused (not absolute, owned by another uid, too many), or empty.
    std::string add(CleanupRule rule, uid_t owner);
    // Removes what the rules name, newest first; what cannot be removed is reported in `errors`
    // (one line each). The list is empty afterwards.
    void run(std::vector<std::string> &errors);
    bool empty() const { return rules_.empty(); }

  private:
    struct Entry {
        CleanupRule rule;
        uid_t owner;
    };
    std::vector<Entry> rules_;
};

}  // namespace zpmix
