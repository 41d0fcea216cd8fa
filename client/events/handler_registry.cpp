#include "client/events/handler_registry.hpp"
#include "client/values/pmix_objects.hpp"

#include <algorithm>
#include <cstring>

namespace zpmix::client {

namespace {

bool same_proc(const msg::Proc &a, const msg::Proc &b) {
    return a.nspace == b.nspace &&
           (a.rank == b.rank || a.rank == PMIX_RANK_WILDCARD || b.rank == PMIX_RANK_WILDCARD);
}

}  // namespace

pmix_status_t EventHandler::parse(const pmix_status_t codes_in[], size_t ncodes,
                                  const pmix_info_t info[], size_t ninfo, EventHandler &out) {
    if (ncodes > 0 && codes_in == nullptr) return PMIX_ERR_BAD_PARAM;
    if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
    out.codes.assign(codes_in, codes_in + ncodes);
    std::sort(out.codes.begin(), out.codes.end());
    out.codes.erase(std::unique(out.codes.begin(), out.codes.end()), out.codes.end());
    bool job = false, enviro = false;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_info_t &in = info[i];
        const bool on = (c::check_true(&in.value) == PMIX_BOOL_TRUE);
        auto string_of = [&](std::string &into) {
            if (in.value.type != PMIX_STRING || in.value.data.string == nullptr) return false;
            into = in.value.data.string;
            return true;
        };
        if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_NAME)) {
            if (!string_of(out.name)) return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_FIRST)) {
            if (on) out.place = Place::first;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_LAST)) {
            if (on) out.place = Place::last;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)) {
            if (on) out.place = Place::first_in_category;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_LAST_IN_CATEGORY)) {
            if (on) out.place = Place::last_in_category;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_BEFORE)) {
            if (!string_of(out.relative_to)) return PMIX_ERR_BAD_PARAM;
            out.place = Place::before;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_AFTER)) {
            if (!string_of(out.relative_to)) return PMIX_ERR_BAD_PARAM;
            out.place = Place::after;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_PREPEND)) {
            if (on) out.place = Place::prepend;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_HDLR_APPEND)) {
            if (on) out.place = Place::append;
        } else if (PMIX_CHECK_KEY(&in, kEventJobLevel)) {
            job = job || on;
        } else if (PMIX_CHECK_KEY(&in, kEventEnviroLevel)) {
            enviro = enviro || on;
        } else if (PMIX_CHECK_KEY(&in, PMIX_RANGE)) {
            if (in.value.type != PMIX_DATA_RANGE) return PMIX_ERR_BAD_PARAM;
            out.range = in.value.data.range;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_CUSTOM_RANGE)) {
            if (!procs_of(in.value, out.custom_range)) return PMIX_ERR_BAD_PARAM;
            out.range = PMIX_RANGE_CUSTOM;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_AFFECTED_PROC) ||
                   PMIX_CHECK_KEY(&in, PMIX_EVENT_AFFECTED_PROCS)) {
            if (!procs_of(in.value, out.affected)) return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_RETURN_OBJECT)) {
            if (in.value.type == PMIX_POINTER) out.return_object = in.value.data.ptr;
        }
        // Other directives (timeouts, proxies...) do not change how this library delivers.
    }
    // Job-level events by default; only environment events when just those were asked for.
    out.enviro_level = enviro;
    out.job_level = job || !enviro;
    return PMIX_SUCCESS;
}

pmix_status_t HandlerRegistry::add(EventHandler h, std::size_t &id) {
    Category &cat = categories_[h.category()];
    using Place = EventHandler::Place;
    std::deque<std::size_t>::iterator where = cat.middle.end();
    switch (h.place) {
        case Place::first:
            if (first_) return PMIX_ERR_EVENT_REGISTRATION;
            break;
        case Place::last:
            if (last_) return PMIX_ERR_EVENT_REGISTRATION;
            break;
        case Place::first_in_category:
            if (cat.first) return PMIX_ERR_EVENT_REGISTRATION;
            break;
        case Place::last_in_category:
            if (cat.last) return PMIX_ERR_EVENT_REGISTRATION;
            break;
        case Place::before:
        case Place::after: {
            auto named = [&](std::size_t other) {
                return handlers_.at(other).name == h.relative_to;
            };
            where = std::find_if(cat.middle.begin(), cat.middle.end(), named);
            if (where != cat.middle.end()) {
                if (h.place == Place::after) ++where;
            } else if (h.place == Place::after && cat.first && named(*cat.first)) {
                where = cat.middle.begin();  // right after the category's first
            } else if (h.place == Place::before && cat.last && named(*cat.last)) {
                where = cat.middle.end();  // right before the category's last
            } else {
                return PMIX_ERR_NOT_FOUND;
            }
            break;
        }
        case Place::prepend:
            where = cat.middle.begin();
            break;
        case Place::append:
            break;
    }
    id = next_id_++;
    h.id = id;
    if (h.name.empty()) h.name = "evhdlr-" + std::to_string(id);
    switch (h.place) {
        case Place::first:
            first_ = id;
            break;
        case Place::last:
            last_ = id;
            break;
        case Place::first_in_category:
            cat.first = id;
            break;
        case Place::last_in_category:
            cat.last = id;
            break;
        default:
            cat.middle.insert(where, id);
            break;
    }
    handlers_.emplace(id, std::move(h));
    return PMIX_SUCCESS;
}

bool HandlerRegistry::remove(std::size_t id) {
    auto it = handlers_.find(id);
    if (it == handlers_.end()) return false;
    if (first_ == id) first_.reset();
    if (last_ == id) last_.reset();
    for (auto &cat : categories_) {
        if (cat.first == id) cat.first.reset();
        if (cat.last == id) cat.last.reset();
        std::erase(cat.middle, id);
    }
    handlers_.erase(it);
    return true;
}

const EventHandler *HandlerRegistry::find(std::size_t id) const {
    auto it = handlers_.find(id);
    return it == handlers_.end() ? nullptr : &it->second;
}

bool HandlerRegistry::wants_enviro() const {
    return std::any_of(handlers_.begin(), handlers_.end(),
                       [](const auto &kv) { return kv.second.enviro_level; });
}

std::vector<std::size_t> HandlerRegistry::order() const {
    std::vector<std::size_t> out;
    if (first_) out.push_back(*first_);
    for (const auto &cat : categories_) {
        if (cat.first) out.push_back(*cat.first);
        out.insert(out.end(), cat.middle.begin(), cat.middle.end());
        if (cat.last) out.push_back(*cat.last);
    }
    if (last_) out.push_back(*last_);
    return out;
}

bool HandlerRegistry::in_range(const EventHandler &h, const msg::Proc &source) const {
    switch (h.range) {
        case PMIX_RANGE_PROC_LOCAL:
            return source == scope_.self;
        case PMIX_RANGE_NAMESPACE:
            return source.nspace == scope_.self.nspace;
        case PMIX_RANGE_LOCAL:
            return scope_.is_local && scope_.is_local(source);
        case PMIX_RANGE_RM:
            return scope_.is_host && scope_.is_host(source);
        case PMIX_RANGE_CUSTOM:
            return std::any_of(h.custom_range.begin(), h.custom_range.end(),
                               [&](const msg::Proc &p) { return same_proc(p, source); });
        default:
            return true;  // session, global, undefined: every source we can hear from
    }
}

bool HandlerRegistry::matches(const EventHandler &h, const LocalEvent &ev) const {
    if (ev.enviro ? !h.enviro_level : !h.job_level) return false;
    if (h.codes.empty()) {
        if (ev.non_default) return false;
    } else if (!std::binary_search(h.codes.begin(), h.codes.end(), ev.status)) {
        return false;
    }
    if (!in_range(h, to_msg(ev.source))) return false;
    if (!h.affected.empty()) {
        const bool hit = std::any_of(h.affected.begin(), h.affected.end(), [&](const msg::Proc &a) {
            return std::any_of(ev.affected.begin(), ev.affected.end(),
                               [&](const msg::Proc &b) { return same_proc(a, b); });
        });
        if (!hit && !spawner_hears_job_end(h, ev)) return false;
    }
    return true;
}

// A job's end sent to this process as its spawner (or as one that asked for it) passes a filter
// that names this process's own namespace. When OpenPMIx's tool example was written, a tool's
// children shared its namespace family, and the example still filters its children's end so;
// PRRTE addresses that event to the spawner, with the child job as the affected process.
bool HandlerRegistry::spawner_hears_job_end(const EventHandler &h, const LocalEvent &ev) const {
    if (ev.status != PMIX_EVENT_JOB_END) return false;
    auto me = [&](const msg::Proc &p) { return same_proc(p, scope_.self); };
    return std::any_of(ev.addressed_to.begin(), ev.addressed_to.end(), me) &&
           std::any_of(h.affected.begin(), h.affected.end(), me);
}

std::vector<std::size_t> HandlerRegistry::chain_for(const LocalEvent &ev) const {
    std::vector<std::size_t> out;
    for (std::size_t id : order())
        if (matches(handlers_.at(id), ev)) out.push_back(id);
    return out;
}

}  // namespace zpmix::client
