#include "actors/tree/gather.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include <fmt/format.h>
#include <pmix_common.h>
#include <msgpack.hpp>

namespace zpmix::tree {

static_assert(kUnreachable == PMIX_ERR_UNREACH);

Status Gather::concatenate(const std::string &, const Bytes *local,
                           const std::vector<Bytes> &children, Bytes &out) {
    std::vector<msgpack::object_handle> arrays;
    std::size_t count = local ? 1 : 0;
    for (const Bytes &part : children) {
        try {
            std::size_t offset = 0;
            arrays.push_back(msgpack::unpack(part.data(), part.size(), offset));
            const msgpack::object &a = arrays.back().get();
            if (offset != part.size() || a.type != msgpack::type::ARRAY)
                return PMIX_ERR_UNPACK_FAILURE;
            for (const msgpack::object &e : a.via.array)
                if (e.type != msgpack::type::BIN) return PMIX_ERR_UNPACK_FAILURE;
            count += a.via.array.size;
        } catch (const std::exception &) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
    }
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_array(static_cast<std::uint32_t>(count));
    auto bin = [&pk](const char *data, std::size_t size) {
        pk.pack_bin(static_cast<std::uint32_t>(size));
        pk.pack_bin_body(data, static_cast<std::uint32_t>(size));
    };
    if (local) bin(local->data(), local->size());
    for (const auto &a : arrays)
        for (const msgpack::object &e : a.get().via.array) bin(e.via.bin.ptr, e.via.bin.size);
    out.assign(buf.data(), buf.size());
    return PMIX_SUCCESS;
}

Gather::Gather(Topology topology, Rank rank, Callbacks callbacks, Reduce reduce, Plan plan,
               std::size_t recent)
    : topology_(topology),
      rank_(rank),
      parent_(topology.parent(rank)),
      cb_(std::move(callbacks)),
      reduce_(std::move(reduce)),
      plan_(std::move(plan)),
      recent_max_(recent) {}

Outcome Gather::contribute_local(const std::string &key, Bytes payload) {
    Outcome why;
    Op *op = open(key, "a local part", why);
    if (!op) return why;
    if (!op->parts.local) {
        log("a local part", key, "this broker's node takes no part: refused");
        return Outcome::refused;
    }
    if (op->local) {
        log("a local part", key, "already in: refused");
        return Outcome::duplicate;
    }
    op->local = std::move(payload);
    advance(key);
    return Outcome::taken;
}

Outcome Gather::from_child(Rank child, const std::string &key, Status status, Bytes payload) {
    const std::string what = fmt::format("a part from broker {}", child);
    if (child >= topology_.size() || topology_.parent(child) != rank_) {
        log(what, key, "not a child of this broker: refused");
        return Outcome::refused;
    }
    Outcome why;
    Op *op = open(key, what, why);
    if (!op) return why;
    if (!std::binary_search(op->parts.children.begin(), op->parts.children.end(), child)) {
        log(what, key, "that child takes no part: refused");
        return Outcome::refused;
    }
    if (status != PMIX_SUCCESS) {
        if (!op->failed_children.insert(child).second) {
            log(what, key, "its failure was already in: refused");
            return Outcome::duplicate;
        }
        fail_op(key, status);
        return Outcome::taken;
    }
    if (op->failed_children.contains(child) ||
        !op->from_children.try_emplace(child, std::move(payload)).second) {
        log(what, key, "already in: refused");
        return Outcome::duplicate;
    }
    advance(key);
    return Outcome::taken;
}

Outcome Gather::from_parent(const std::string &key, Status status, const Bytes &result) {
    if (!parent_) {
        log("a verdict from a parent", key, "the root has no parent: refused");
        return Outcome::refused;
    }
    Outcome why;
    // Opened when new: a failure can come down before anything went up.
    if (!open(key, "the root's verdict", why)) return why;
    finish(key, status, result);
    return Outcome::taken;
}

Outcome Gather::fail(const std::string &key, Status status) {
    if (status == PMIX_SUCCESS) {
        log("a failure", key, "PMIX_SUCCESS is no failure: refused");
        return Outcome::refused;
    }
    Outcome why;
    if (!open(key, "a failure", why)) return why;
    fail_op(key, status);
    return Outcome::taken;
}

void Gather::child_lost(Rank child, Status status) {
    if (child >= topology_.size() || topology_.parent(child) != rank_) {
        log(fmt::format("the loss of broker {}", child), "-", "not a child of this broker");
        return;
    }
    lost_children_[child] = status;
    std::vector<std::string> waiting;
    for (const auto &[key, op] : ops_)
        if (std::binary_search(op.parts.children.begin(), op.parts.children.end(), child))
            waiting.push_back(key);
    for (const auto &key : waiting) advance(key);
}

void Gather::parent_lost(Status status) {
    if (!parent_) return log("the loss of the parent", "-", "the root has no parent");
    parent_lost_ = status;
    std::vector<std::string> pending;
    for (const auto &[key, op] : ops_) pending.push_back(key);
    for (const auto &key : pending) advance(key);
}

Gather::Op *Gather::open(const std::string &key, std::string_view what, Outcome &why) {
    if (auto it = ops_.find(key); it != ops_.end()) return &it->second;
    if (recent_.contains(key)) {
        log(what, key, "the operation is over here: ignored");
        why = Outcome::late;
        return nullptr;
    }
    std::optional<Parts> parts = plan_ ? plan_(key) : Parts{true, topology_.children(rank_)};
    if (parts) {
        auto &c = parts->children;
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
        const bool all_children = std::all_of(c.begin(), c.end(), [this](Rank r) {
            return r < topology_.size() && topology_.parent(r) == rank_;
        });
        if (!all_children || (!parts->local && c.empty())) parts.reset();
    }
    if (!parts) {
        log(what, key, "this broker's subtree takes no part in it: refused");
        why = Outcome::refused;
        return nullptr;
    }
    Op &op = ops_[key];
    op.parts = std::move(*parts);
    return &op;
}

void Gather::advance(const std::string &key) {
    auto it = ops_.find(key);
    if (it == ops_.end()) return;
    Op &op = it->second;
    if (parent_lost_) return finish(key, *parent_lost_, {});
    for (Rank c : op.parts.children) {
        auto lost = lost_children_.find(c);
        if (lost != lost_children_.end() && !op.from_children.contains(c) &&
            op.failed_children.insert(c).second)
            return fail_op(key, lost->second);
    }
    if (op.sent_up || op.failed_up) return;
    if ((op.parts.local && !op.local) || op.from_children.size() != op.parts.children.size())
        return;
    std::vector<Bytes> children;
    for (auto &[child, part] : op.from_children) children.push_back(std::move(part));
    Bytes combined;
    const Status status = reduce_(key, op.local ? &*op.local : nullptr, children, combined);
    if (op.local) *op.local = Bytes();  // in (a second one is a duplicate), no longer needed
    if (status != PMIX_SUCCESS) {
        log("combining the parts", key, fmt::format("failed with status {}", status));
        return fail_op(key, status);
    }
    if (!parent_) return finish(key, PMIX_SUCCESS, combined);
    op.sent_up = true;
    cb_.send_up(*parent_, key, PMIX_SUCCESS, combined);
}

void Gather::fail_op(const std::string &key, Status status) {
    auto it = ops_.find(key);
    if (it == ops_.end()) return;
    if (!parent_ || parent_lost_) return finish(key, status, {});
    if (it->second.failed_up) return;
    it->second.failed_up = true;
    cb_.send_up(*parent_, key, status, {});
}

void Gather::finish(const std::string &key, Status status, const Bytes &result) {
    auto node = ops_.extract(key);
    if (node.empty()) return;
    if (recent_max_ > 0 && recent_.insert(key).second) {
        recent_order_.push_back(key);
        if (recent_order_.size() > recent_max_) {
            recent_.erase(recent_order_.front());
            recent_order_.pop_front();
        }
    }
    for (Rank c : node.mapped().parts.children)
        if (!lost_children_.contains(c)) cb_.send_down(c, key, status, result);
    cb_.complete(key, status, result);
}

void Gather::log(std::string_view what, const std::string &key, std::string_view why) {
    if (cb_.log) cb_.log(fmt::format("tree broker {}: {} for {}: {}", rank_, what, key, why));
}

}  // namespace zpmix::tree
