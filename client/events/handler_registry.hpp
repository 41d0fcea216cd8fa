#pragma once
// The event handlers a client process registered, in the order RFC0002 runs them: handlers of
// one specific code, then handlers of several codes, then default handlers (no code). Within a
// category, a handler may ask to be first or last of it, before or after a named handler, or be
// prepended or appended (the default). PMIX_EVENT_HDLR_FIRST/LAST put one handler before or after
// all categories.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pmix_common.h>

#include "client/events/local_event.hpp"

namespace zpmix::client {

// Registration directives of the PMIx v2 event chapter that later headers dropped; honoured by
// their key strings.
inline constexpr const char *kEventJobLevel = "pmix.evjob";     // PMIX_EVENT_JOB_LEVEL
inline constexpr const char *kEventEnviroLevel = "pmix.evenv";  // PMIX_EVENT_ENVIRO_LEVEL
// In the results a handler hands to the next: the earlier handler's status.
inline constexpr const char *kHandlerStatus = "zpmix.evhdlr.status";

struct EventHandler {
    enum class Place {
        append,
        prepend,
        first,
        last,
        first_in_category,
        last_in_category,
        before,
        after
    };

    std::size_t id = 0;
    std::vector<pmix_status_t> codes;  // empty: a default handler
    std::string name;                  // PMIX_EVENT_HDLR_NAME (or "evhdlr-<id>")
    Place place = Place::append;
    std::string relative_to;    // the named handler for before/after
    bool job_level = true;      // receives job-level events
    bool enviro_level = false;  // receives environment events (PMIX_EVENT_ENVIRO_LEVEL)
    pmix_data_range_t range = PMIX_RANGE_UNDEF;  // PMIX_RANGE: only events whose source is in it
    std::vector<msg::Proc> custom_range;         // PMIX_EVENT_CUSTOM_RANGE
    std::vector<msg::Proc> affected;  // PMIX_EVENT_AFFECTED_PROC(S): only events affecting these
    pmix_notification_fn_t fn = nullptr;
    void *return_object = nullptr;  // PMIX_EVENT_RETURN_OBJECT

    int category() const { return codes.size() == 1 ? 0 : codes.empty() ? 2 : 1; }

    // Reads the registration directives; returns PMIX_ERR_BAD_PARAM on a malformed one.
    static pmix_status_t parse(const pmix_status_t codes[], size_t ncodes, const pmix_info_t info[],
                               size_t ninfo, EventHandler &out);
};

// Who the handler's process is, for the source-range filters.
struct EventScope {
    msg::Proc self;
    std::function<bool(const msg::Proc &)> is_local;  // source on this node (LOCAL range)
    std::function<bool(const msg::Proc &)> is_host;   // source is the resource manager (RM range)
};

class HandlerRegistry {
  public:
    explicit HandlerRegistry(EventScope scope) : scope_(std::move(scope)) {}

    // Assigns the id; PMIX_ERR_EVENT_REGISTRATION when the first/last place (overall or of the
    // category) is taken, PMIX_ERR_NOT_FOUND when before/after names no handler of the category.
    pmix_status_t add(EventHandler h, std::size_t &id);
    // False when no handler has that id.
    bool remove(std::size_t id);
    const EventHandler *find(std::size_t id) const;
    bool empty() const { return handlers_.empty(); }
    bool wants_enviro() const;

    // The handlers `ev` reaches, in running order.
    std::vector<std::size_t> chain_for(const LocalEvent &ev) const;
    bool matches(const EventHandler &h, const LocalEvent &ev) const;

  private:
    bool spawner_hears_job_end(const EventHandler &h, const LocalEvent &ev) const;

    struct Category {
        std::optional<std::size_t> first, last;
        std::deque<std::size_t> middle;
    };
    EventScope scope_;
    std::size_t next_id_ = 1;
    std::map<std::size_t, EventHandler> handlers_;
    std::optional<std::size_t> first_, last_;
    Category categories_[3];

    std::vector<std::size_t> order() const;
    bool in_range(const EventHandler &h, const msg::Proc &source) const;
};

}  // namespace zpmix::client
