#include "actors/launcher/cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace zpmix {

namespace {

bool ignored(const CleanupRule &rule, const char *name) {
    return std::find(rule.ignore.begin(), rule.ignore.end(), name) != rule.ignore.end();
}

void note(std::vector<std::string> &errors, const std::string &path, int err) {
    errors.push_back(path + ": " + std::strerror(err));
}

// Empties the directory open as `fd` by the rule, relative to it (no path is resolved twice, so a
// directory swapped for a link meanwhile is not followed). True when nothing of it is left.
bool clean_dir(int fd, const std::string &path, const CleanupRule &rule, uid_t owner,
               std::vector<std::string> &errors) {
    DIR *d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        note(errors, path, errno);
        return false;
    }
    bool empty = true;
    while (const dirent *e = ::readdir(d)) {
        const char *name = e->d_name;
        if (!std::strcmp(name, ".") || !std::strcmp(name, "..")) continue;
        const std::string sub = path + "/" + name;
        struct stat st {};
        if (ignored(rule, name) || ::fstatat(::dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_uid != owner) {
            empty = false;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (!rule.recursive) {
                empty = false;
                continue;
            }
            const int child = ::openat(::dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (child < 0 || !clean_dir(child, sub, rule, owner, errors) ||
                ::unlinkat(::dirfd(d), name, AT_REMOVEDIR) != 0) {
                empty = false;
            }
        } else if (rule.empty_only || ::unlinkat(::dirfd(d), name, 0) != 0) {
            if (!rule.empty_only) note(errors, sub, errno);
            empty = false;
        }
    }
    ::closedir(d);
    return empty;
}

void remove(const CleanupRule &rule, uid_t owner, std::vector<std::string> &errors) {
    struct stat st {};
    if (::lstat(rule.path.c_str(), &st) != 0) return;  // gone already: nothing to do
    if (st.st_uid != owner) {
        errors.push_back(rule.path + ": owned by uid " + std::to_string(st.st_uid) +
                         ", not by the registering uid " + std::to_string(owner));
        return;
    }
    if (!rule.dir || !S_ISDIR(st.st_mode)) {
        if (::unlink(rule.path.c_str()) != 0 && errno != ENOENT) note(errors, rule.path, errno);
        return;
    }
    const int fd = ::open(rule.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0) return note(errors, rule.path, errno);
    if (clean_dir(fd, rule.path, rule, owner, errors) && !rule.leave_topdir &&
        ::rmdir(rule.path.c_str()) != 0)
        note(errors, rule.path, errno);
}

}  // namespace

std::string CleanupList::add(CleanupRule rule, uid_t owner) {
    namespace fs = std::filesystem;
    const fs::path p = fs::path(rule.path).lexically_normal();
    if (!p.is_absolute() || p == p.root_path())
        return "'" + rule.path + "' is not an absolute path";
    rule.path = p.string();
    if (rule.path.size() > 1 && rule.path.back() == '/') rule.path.pop_back();
    struct stat st {};
    if (::lstat(rule.path.c_str(), &st) == 0 && st.st_uid != owner)
        return rule.path + " is owned by uid " + std::to_string(st.st_uid);
    if (rules_.size() >= kMaxRules)
        return "more than " + std::to_string(kMaxRules) + " cleanup registrations";
    rules_.push_back({std::move(rule), owner});
    return {};
}

void CleanupList::run(std::vector<std::string> &errors) {
    for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) remove(it->rule, it->owner, errors);
    rules_.clear();
}

}  // namespace zpmix
