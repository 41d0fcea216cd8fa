#include "server/resources.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "client/values/pmix_objects.hpp"
#include "pmix.h"

namespace zpmix::server {

namespace {

bool has_key(const pmix_info_t &i, const char *key) {
    return PMIX_CHECK_KEY(&i, key);
}

// The infos of a PMIX_DATA_ARRAY of PMIX_INFO; none for any other value.
std::optional<std::pair<const pmix_info_t *, std::size_t>> info_array(const pmix_value_t &v) {
    if (v.type != PMIX_DATA_ARRAY || !v.data.darray || v.data.darray->type != PMIX_INFO)
        return std::nullopt;
    return std::make_pair(static_cast<const pmix_info_t *>(v.data.darray->array),
                          v.data.darray->size);
}

bool is_node_id(const pmix_info_t &i) {
    return has_key(i, PMIX_HOSTNAME) || has_key(i, PMIX_NODEID);
}

std::optional<std::string> host_of(const pmix_info_t &i) {
    if (has_key(i, PMIX_HOSTNAME) && i.value.type == PMIX_STRING && i.value.data.string)
        return std::string(i.value.data.string);
    return std::nullopt;
}

std::optional<std::uint32_t> id_of(const pmix_info_t &i) {
    if (!has_key(i, PMIX_NODEID)) return std::nullopt;
    pmix_status_t rc;
    std::uint32_t n = 0;
    PMIX_VALUE_GET_NUMBER(rc, &i.value, n, std::uint32_t);
    if (rc != PMIX_SUCCESS) return std::nullopt;
    return n;
}

bool equal(const pmix_value_t &a, const pmix_value_t &b) {
    return c::value_compare(const_cast<pmix_value_t *>(&a), const_cast<pmix_value_t *>(&b)) ==
           PMIX_EQUAL;
}

// Whether `member` is what `target` names: the same key and value, or an info array (a fabric
// device, say) holding an element with the target's key and value.
bool matches(const pmix_info_t &member, const pmix_info_t &target) {
    if (PMIX_CHECK_KEY(&member, target.key) && equal(member.value, target.value)) return true;
    if (auto arr = info_array(member.value))
        for (std::size_t k = 0; k < arr->second; ++k)
            if (PMIX_CHECK_KEY(&arr->first[k], target.key) &&
                equal(arr->first[k].value, target.value))
                return true;
    return false;
}

bool group_bootstrap(const pmix_info_t &i) {
    return has_key(i, PMIX_GROUP_INFO) || has_key(i, PMIX_GROUP_ENDPT_DATA) ||
           has_key(i, "pmix.grp.infoarr") || has_key(i, "pmix.grp.jinfo");
}

}  // namespace

OwnedInfo::OwnedInfo(const pmix_info_t &src) {
    PMIX_INFO_CONSTRUCT(&i_);
    if (c::info_xfer(&i_, &src) != PMIX_SUCCESS) {
        PMIX_INFO_DESTRUCT(&i_);
        PMIX_INFO_CONSTRUCT(&i_);
        PMIX_LOAD_KEY(i_.key, src.key);  // the key alone: a value that cannot be copied
    }
}

OwnedInfo::OwnedInfo(OwnedInfo &&o) noexcept : i_(o.i_) {
    PMIX_INFO_CONSTRUCT(&o.i_);
}

OwnedInfo &OwnedInfo::operator=(OwnedInfo &&o) noexcept {
    if (this != &o) {
        PMIX_INFO_DESTRUCT(&i_);
        i_ = o.i_;
        PMIX_INFO_CONSTRUCT(&o.i_);
    }
    return *this;
}

OwnedInfo::~OwnedInfo() {
    PMIX_INFO_DESTRUCT(&i_);
}

Resources::Node *Resources::find(const std::optional<std::string> &host,
                                 const std::optional<std::uint32_t> &id) {
    for (Node &n : nodes_)
        if ((host && n.host == host) || (!host && id && n.id == id)) return &n;
    return nullptr;
}

void Resources::add_node(const pmix_info_t *items, std::size_t n) {
    std::optional<std::string> host;
    std::optional<std::uint32_t> id;
    for (std::size_t k = 0; k < n; ++k) {
        if (auto h = host_of(items[k])) host = h;
        if (auto v = id_of(items[k])) id = v;
    }
    Node *node = find(host, id);
    if (!node) {
        node = &nodes_.emplace_back();
        node->host = host;
        node->id = id;
    }
    for (std::size_t k = 0; k < n; ++k) {
        const pmix_info_t &i = items[k];
        auto &into = is_node_id(i) ? node->ids : node->members;
        auto same = std::find_if(into.begin(), into.end(), [&](const OwnedInfo &o) {
            return PMIX_CHECK_KEY(&o.info(), i.key);
        });
        if (same != into.end())
            *same = OwnedInfo(i);
        else
            into.emplace_back(i);
    }
    if (!node->host && host) node->host = host;
    if (!node->id && id) node->id = id;
}

pmix_status_t Resources::add(const pmix_info_t info[], std::size_t ninfo) {
    for (std::size_t n = 0; info && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (group_bootstrap(i)) {
            spdlog::error(
                "pmix server: PMIx_server_register_resources: '{}' (a group's bootstrap "
                "data) is not supported: groups cross nodes through the host's `group` "
                "upcall",
                i.key);
            return PMIX_ERR_NOT_SUPPORTED;
        }
        if (has_key(i, PMIX_NODE_INFO_ARRAY)) {
            auto arr = info_array(i.value);
            bool named = false;
            for (std::size_t k = 0; arr && k < arr->second; ++k)
                named = named || host_of(arr->first[k]) || id_of(arr->first[k]);
            if (!named) {
                spdlog::error(
                    "pmix server: PMIx_server_register_resources: a {} names no node "
                    "(PMIX_HOSTNAME or PMIX_NODEID)",
                    PMIX_NODE_INFO_ARRAY);
                return PMIX_ERR_BAD_PARAM;
            }
        }
    }
    std::lock_guard lock(mu_);
    for (std::size_t n = 0; info && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (has_key(i, PMIX_NODE_INFO_ARRAY)) {
            auto arr = info_array(i.value);
            add_node(arr->first, arr->second);
            continue;
        }
        auto same = std::find_if(plain_.begin(), plain_.end(), [&](const OwnedInfo &o) {
            return PMIX_CHECK_KEY(&o.info(), i.key);
        });
        if (same != plain_.end())
            *same = OwnedInfo(i);
        else
            plain_.emplace_back(i);
    }
    return PMIX_SUCCESS;
}

pmix_status_t Resources::add_inventory(const pmix_info_t info[], std::size_t ninfo) {
    bool arrays = false, named = false;
    for (std::size_t n = 0; info && n < ninfo; ++n) {
        arrays = arrays || has_key(info[n], PMIX_NODE_INFO_ARRAY);
        named = named || host_of(info[n]) || id_of(info[n]);
    }
    if (arrays) return add(info, ninfo);
    if (!named) {
        spdlog::error(
            "pmix server: PMIx_server_deliver_inventory: the inventory names no node "
            "(PMIX_HOSTNAME, as PMIx_server_collect_inventory gives it)");
        return PMIX_ERR_BAD_PARAM;
    }
    std::lock_guard lock(mu_);
    add_node(info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t Resources::remove(const pmix_info_t info[], std::size_t ninfo) {
    std::lock_guard lock(mu_);
    for (std::size_t n = 0; info && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        auto arr = info_array(i.value);
        if (!has_key(i, PMIX_NODE_INFO_ARRAY)) {  // by key alone
            std::erase_if(plain_,
                          [&](const OwnedInfo &o) { return PMIX_CHECK_KEY(&o.info(), i.key); });
            continue;
        }
        if (!arr) {  // every node's
            nodes_.clear();
            continue;
        }
        std::optional<std::string> host;
        std::optional<std::uint32_t> id;
        std::vector<const pmix_info_t *> targets;
        for (std::size_t k = 0; k < arr->second; ++k) {
            const pmix_info_t &m = arr->first[k];
            if (auto h = host_of(m))
                host = h;
            else if (auto v = id_of(m))
                id = v;
            else
                targets.push_back(&m);
        }
        auto chosen = [&](const Node &node) {
            return (!host || node.host == host) && (!id || node.id == id);
        };
        for (Node &node : nodes_) {
            if (!chosen(node)) continue;
            if (targets.empty()) {
                node.members.clear();
                continue;
            }
            std::erase_if(node.members, [&](const OwnedInfo &m) {
                return std::any_of(targets.begin(), targets.end(),
                                   [&](const pmix_info_t *t) { return matches(m.info(), *t); });
            });
        }
        std::erase_if(nodes_, [](const Node &node) { return node.members.empty(); });
    }
    return PMIX_SUCCESS;
}

void Resources::with(const pmix_info_t info[], std::size_t ninfo,
                     const std::function<void(const pmix_info_t *, std::size_t)> &f) const {
    std::lock_guard lock(mu_);
    if (plain_.empty() && nodes_.empty()) {
        f(info, ninfo);
        return;
    }
    // Shallow copies: the entries stay owned here (the lock is held), the caller's by the caller.
    std::vector<std::vector<pmix_info_t>> node_items(nodes_.size());
    std::vector<pmix_data_array_t> arrays(nodes_.size());
    std::vector<pmix_info_t> all;
    all.reserve(plain_.size() + nodes_.size() + ninfo);
    for (const OwnedInfo &o : plain_) all.push_back(o.info());
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
        for (const OwnedInfo &o : nodes_[n].ids) node_items[n].push_back(o.info());
        for (const OwnedInfo &o : nodes_[n].members) node_items[n].push_back(o.info());
        arrays[n] = pmix_data_array_t{PMIX_INFO, node_items[n].size(), node_items[n].data()};
        pmix_info_t a;
        std::memset(&a, 0, sizeof a);
        PMIX_LOAD_KEY(a.key, PMIX_NODE_INFO_ARRAY);
        a.value.type = PMIX_DATA_ARRAY;
        a.value.data.darray = &arrays[n];
        all.push_back(a);
    }
    for (std::size_t n = 0; info && n < ninfo; ++n) all.push_back(info[n]);
    f(all.data(), all.size());
}

}  // namespace zpmix::server
