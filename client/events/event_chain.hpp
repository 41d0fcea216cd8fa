#pragma once
// Runs one event through the handlers it reaches, one after the other (RFC0002): each handler is
// called on the progress thread and reports through its completion callback (from any thread,
// at any time); PMIX_EVENT_ACTION_COMPLETE ends the chain, any other status continues it and is
// appended to the results the later handlers get: one pmix_info_t per earlier handler, keyed by
// its name, holding a data array of its status (kHandlerStatus) and the info it returned.
#include <functional>
#include <memory>
#include <vector>

#include "client/events/handler_registry.hpp"

namespace zpmix::client {

class EventChain : public std::enable_shared_from_this<EventChain> {
  public:
    using Post = std::function<void(std::function<void()>)>;  // onto the progress thread
    // Once the chain ended: its last status, and what every handler that completed returned, as
    // a handler after the last would be given it.
    using Done =
        std::function<void(pmix_status_t last_status, const pmix_info_t *results, size_t nresults)>;

    // Starts the chain now (on the progress thread). `registry` must outlive the chain; a
    // handler removed meanwhile is skipped.
    static void run(HandlerRegistry &registry, std::shared_ptr<const LocalEvent> ev,
                    std::vector<std::size_t> handlers, Post post, Done done = {});

    EventChain(HandlerRegistry &registry, std::shared_ptr<const LocalEvent> ev,
               std::vector<std::size_t> handlers, Post post, Done done);
    ~EventChain();

  private:
    struct Step;
    static void on_handler_done(pmix_status_t status, pmix_info_t *results, size_t nresults,
                                pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                                void *notification_cbdata);
    void next();
    void finish(pmix_status_t status);

    HandlerRegistry &registry_;
    std::shared_ptr<const LocalEvent> event_;
    std::vector<std::size_t> handlers_;
    std::size_t at_ = 0;
    Post post_;
    Done done_;
    const bool collect_;                // done_ reads the results: every handler's are kept
    std::vector<pmix_info_t> results_;  // owned
};

}  // namespace zpmix::client
