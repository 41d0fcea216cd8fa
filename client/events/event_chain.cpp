#include "client/events/event_chain.hpp"
#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"
#include "client/values/pmix_types.hpp"

#include <cstring>

namespace zpmix::client {

// What a running handler's completion callback refers to: the chain, and the info array it was
// given (valid until it completes).
struct EventChain::Step {
    std::shared_ptr<EventChain> chain;
    std::string name;
    std::vector<pmix_info_t> info;  // shallow copies of the event's info, plus RETURN_OBJECT
    bool last = false;              // no handler after this one: nobody reads its results
};

void EventChain::run(HandlerRegistry &registry, std::shared_ptr<const LocalEvent> ev,
                     std::vector<std::size_t> handlers, Post post, Done done) {
    auto chain = std::make_shared<EventChain>(registry, std::move(ev), std::move(handlers),
                                              std::move(post), std::move(done));
    chain->next();
}

EventChain::EventChain(HandlerRegistry &registry, std::shared_ptr<const LocalEvent> ev,
                       std::vector<std::size_t> handlers, Post post, Done done)
    : registry_(registry),
      event_(std::move(ev)),
      handlers_(std::move(handlers)),
      post_(std::move(post)),
      done_(std::move(done)),
      collect_(static_cast<bool>(done_)) {}

EventChain::~EventChain() {
    for (auto &r : results_) c::object_destruct(PMIX_INFO, &r);
}

void EventChain::next() {
    while (at_ < handlers_.size()) {
        const std::size_t id = handlers_[at_++];
        const EventHandler *h = registry_.find(id);
        if (h == nullptr) continue;  // deregistered since the event arrived
        auto *step = new Step{shared_from_this(), h->name, {}, at_ == handlers_.size()};
        step->info.assign(event_->info, event_->info + event_->ninfo);
        if (h->return_object != nullptr) {
            pmix_info_t ret{};
            c::load_string(ret.key, PMIX_EVENT_RETURN_OBJECT, PMIX_MAX_KEYLEN);
            ret.value.type = PMIX_POINTER;
            ret.value.data.ptr = h->return_object;
            step->info.push_back(ret);
        }
        h->fn(id, event_->status, &event_->source, step->info.empty() ? nullptr : step->info.data(),
              step->info.size(), results_.empty() ? nullptr : results_.data(), results_.size(),
              &EventChain::on_handler_done, step);
        return;  // continued by on_handler_done
    }
    finish(PMIX_SUCCESS);
}

void EventChain::on_handler_done(pmix_status_t status, pmix_info_t *results, size_t nresults,
                                 pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                                 void *notification_cbdata) {
    auto *step = static_cast<Step *>(notification_cbdata);
    // Keep what the handler returned for the handlers after it, then give it its results back.
    pmix_info_t summary{};
    const bool continues = status != PMIX_EVENT_ACTION_COMPLETE && !step->last;
    const bool keep = continues || step->chain->collect_;
    if (keep) {
        c::load_string(summary.key, step->name.c_str(), PMIX_MAX_KEYLEN);
        pmix_info_t *items = nullptr;
        items = static_cast<pmix_info_t *>(c::array_create(PMIX_INFO, nresults + 1));
        c::info_load(&items[0], kHandlerStatus, &status, PMIX_STATUS);
        for (size_t i = 0; i < nresults; ++i) c::info_xfer(&items[i + 1], &results[i]);
        summary.value.type = PMIX_DATA_ARRAY;
        summary.value.data.darray =
            static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
        summary.value.data.darray->type = PMIX_INFO;
        summary.value.data.darray->size = nresults + 1;
        summary.value.data.darray->array = items;
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, thiscbdata);

    std::shared_ptr<EventChain> chain = std::move(step->chain);
    delete step;
    chain->post_([chain, status, continues, keep, summary]() mutable {
        if (keep) chain->results_.push_back(summary);
        if (!continues) {
            chain->finish(status == PMIX_EVENT_ACTION_COMPLETE ? status : PMIX_SUCCESS);
            return;
        }
        chain->next();
    });
}

void EventChain::finish(pmix_status_t status) {
    if (done_) {
        Done done = std::move(done_);
        done(status, results_.empty() ? nullptr : results_.data(), results_.size());
    }
}

}  // namespace zpmix::client
