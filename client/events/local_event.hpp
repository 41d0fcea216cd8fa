#pragma once
// An event as a client's handlers see it: the PMIx status, source and info array the standard's
// handler signature takes, plus what the registry filters on. Built from a published event (the
// info blob decoded, and the event's standard fields appended as attributes) or raised locally.
#include <memory>
#include <vector>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"

namespace zpmix::client {

struct LocalEvent {
    pmix_status_t status = PMIX_SUCCESS;
    pmix_proc_t source{};
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    std::vector<msg::Proc> affected;
    std::vector<msg::Proc> addressed_to;  // a custom range's processes, as published
    bool non_default = false;
    bool enviro = false;
    pmix_info_t *info = nullptr;  // owned
    size_t ninfo = 0;

    LocalEvent() = default;
    LocalEvent(const LocalEvent &) = delete;
    LocalEvent &operator=(const LocalEvent &) = delete;
    ~LocalEvent();

    // From a published event; throws std::runtime_error when its info blob does not decode.
    static std::shared_ptr<LocalEvent> from_wire(const msg::Event &ev);
    // The wire form of a notification (info is the caller's array, encoded).
    static pmix_status_t to_wire(pmix_status_t status, const pmix_proc_t &source,
                                 pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                                 msg::Event &out, bool &do_not_cache);
};

msg::Proc to_msg(const pmix_proc_t &p);
pmix_proc_t to_pmix(const msg::Proc &p);
// Appends the processes of a PMIX_PROC value, or of a PMIX_DATA_ARRAY of them; false for another
// type.
bool procs_of(const pmix_value_t &v, std::vector<msg::Proc> &out);

}  // namespace zpmix::client
