#define BOOST_TEST_MODULE handler_chain
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <pmix.h>

#include "client/events/event_chain.hpp"
#include "client/events/stream_tracker.hpp"

// The client's handler registry, the chain that runs an event through it, and the stream tracker,
// without a broker: handlers are plain C callbacks as an application writes them.
using namespace zpmix;
using namespace zpmix::client;

namespace {

std::vector<std::string> g_ran;  // names of the handlers that ran, in order
std::vector<std::vector<std::string>> g_results_seen;
std::map<std::string, pmix_status_t> g_answer;  // name -> status the handler reports
HandlerRegistry *g_registry = nullptr;
std::size_t g_self_remove = 0;

std::string name_of(std::size_t id) {
    return g_registry->find(id)->name;
}

void handler(size_t id, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t,
             pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
             void *cbdata) {
    const std::string name = name_of(id);
    g_ran.push_back(name);
    std::vector<std::string> seen;
    for (size_t i = 0; i < nresults; ++i) {
        const auto *arr = results[i].value.data.darray;
        BOOST_REQUIRE(results[i].value.type == PMIX_DATA_ARRAY);
        const auto *items = static_cast<pmix_info_t *>(arr->array);
        BOOST_TEST(std::string(items[0].key) == kHandlerStatus);
        seen.push_back(std::string(results[i].key) + "=" +
                       std::to_string(items[0].value.data.status) +
                       (arr->size > 1 ? "+" + std::string(items[1].key) : ""));
    }
    g_results_seen.push_back(seen);
    if (id == g_self_remove) g_registry->remove(id);
    auto it = g_answer.find(name);
    pmix_info_t ret;
    PMIX_INFO_CONSTRUCT(&ret);
    const int v = 1;
    PMIx_Info_load(&ret, ("ret." + name).c_str(), &v, PMIX_INT);
    cbfunc(it == g_answer.end() ? PMIX_SUCCESS : it->second, &ret, 1, nullptr, nullptr, cbdata);
    PMIX_INFO_DESTRUCT(&ret);
}

struct Fixture {
    HandlerRegistry reg{EventScope{{"job1", 0},
                                   [](const msg::Proc &p) { return p.nspace == "job1"; },
                                   [](const msg::Proc &p) { return p.nspace == "broker"; }}};
    Fixture() {
        g_registry = &reg;
        g_ran.clear();
        g_results_seen.clear();
        g_answer.clear();
        g_self_remove = 0;
    }

    // Registers a handler for `codes` with the given directives; returns its id (0 on failure).
    std::size_t add(const std::string &name, std::vector<pmix_status_t> codes,
                    std::vector<pmix_info_t> extra = {}, pmix_status_t expect = PMIX_SUCCESS) {
        pmix_info_t n;
        PMIX_INFO_CONSTRUCT(&n);
        PMIx_Info_load(&n, PMIX_EVENT_HDLR_NAME, name.c_str(), PMIX_STRING);
        extra.push_back(n);
        EventHandler h;
        BOOST_REQUIRE(EventHandler::parse(codes.data(), codes.size(), extra.data(), extra.size(),
                                          h) == PMIX_SUCCESS);
        for (auto &i : extra) PMIX_INFO_DESTRUCT(&i);
        h.fn = handler;
        std::size_t id = 0;
        BOOST_TEST(reg.add(h, id) == expect);
        return id;
    }

    // Runs an event synchronously (handlers complete inline, the post runs at once).
    std::vector<std::string> fire(pmix_status_t code, msg::Proc source = {"job1", 1},
                                  bool non_default = false, bool enviro = false,
                                  std::vector<msg::Proc> affected = {}) {
        g_ran.clear();
        g_results_seen.clear();
        msg::Event wire;
        wire.status = code;
        wire.source = source;
        wire.non_default = non_default;
        wire.enviro = enviro;
        wire.affected = affected;
        auto ev = LocalEvent::from_wire(wire);
        EventChain::run(reg, ev, reg.chain_for(*ev), [](std::function<void()> fn) { fn(); });
        return g_ran;
    }
};

pmix_info_t flag(const char *key) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    const bool t = true;
    PMIx_Info_load(&i, key, &t, PMIX_BOOL);
    return i;
}
pmix_info_t str(const char *key, const char *v) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIx_Info_load(&i, key, v, PMIX_STRING);
    return i;
}

using Names = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_CASE(single_code_then_multi_code_then_default) {
    Fixture f;
    f.add("default", {});
    f.add("multi", {-10, -11});
    f.add("single", {-10});
    BOOST_TEST(f.fire(-10) == (Names{"single", "multi", "default"}),
               boost::test_tools::per_element());
    BOOST_TEST(f.fire(-11) == (Names{"multi", "default"}), boost::test_tools::per_element());
    BOOST_TEST(f.fire(-12) == (Names{"default"}), boost::test_tools::per_element());
    // A default handler never sees a non-default event.
    BOOST_TEST(f.fire(-12, {"job1", 1}, true).empty());
    BOOST_TEST(f.fire(-10, {"job1", 1}, true) == (Names{"single", "multi"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(first_last_and_category_places) {
    Fixture f;
    f.add("d1", {});
    f.add("s1", {-1});
    f.add("last", {}, {flag(PMIX_EVENT_HDLR_LAST)});
    f.add("s-last", {-1}, {flag(PMIX_EVENT_HDLR_LAST_IN_CATEGORY)});
    f.add("s2", {-1});
    f.add("first", {-1, -2}, {flag(PMIX_EVENT_HDLR_FIRST)});
    f.add("s-first", {-1}, {flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)});
    f.add("s0", {-1}, {flag(PMIX_EVENT_HDLR_PREPEND)});
    f.add("d2", {}, {flag(PMIX_EVENT_HDLR_APPEND)});
    BOOST_TEST(
        f.fire(-1) == (Names{"first", "s-first", "s0", "s1", "s2", "s-last", "d1", "d2", "last"}),
        boost::test_tools::per_element());
    // Each of those places can be taken once.
    f.add("first2", {}, {flag(PMIX_EVENT_HDLR_FIRST)}, PMIX_ERR_EVENT_REGISTRATION);
    f.add("last2", {-3}, {flag(PMIX_EVENT_HDLR_LAST)}, PMIX_ERR_EVENT_REGISTRATION);
    f.add("s-first2", {-7}, {flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)}, PMIX_ERR_EVENT_REGISTRATION);
    // ...but another category's first is free.
    f.add("d-first", {}, {flag(PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)});
    BOOST_TEST(f.fire(-9) == (Names{"d-first", "d1", "d2", "last"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(before_and_after_a_named_handler) {
    Fixture f;
    f.add("a", {-1});
    f.add("c", {-1});
    f.add("b", {-1}, {str(PMIX_EVENT_HDLR_BEFORE, "c")});
    f.add("d", {-1}, {str(PMIX_EVENT_HDLR_AFTER, "c")});
    f.add("a2", {-1}, {str(PMIX_EVENT_HDLR_AFTER, "a")});
    BOOST_TEST(f.fire(-1) == (Names{"a", "a2", "b", "c", "d"}), boost::test_tools::per_element());
    f.add("x", {-1}, {str(PMIX_EVENT_HDLR_BEFORE, "nobody")}, PMIX_ERR_NOT_FOUND);
    // Only within the handler's category: "a" is a single-code handler.
    f.add("y", {}, {str(PMIX_EVENT_HDLR_AFTER, "a")}, PMIX_ERR_NOT_FOUND);
}

BOOST_AUTO_TEST_CASE(results_accumulate_and_action_complete_stops) {
    Fixture f;
    f.add("one", {-1});
    f.add("two", {-1, -2});
    f.add("three", {});
    f.add("four", {}, {flag(PMIX_EVENT_HDLR_LAST)});
    g_answer["one"] = PMIX_EVENT_NO_ACTION_TAKEN;
    g_answer["two"] = PMIX_EVENT_PARTIAL_ACTION_TAKEN;
    g_answer["three"] = PMIX_EVENT_ACTION_COMPLETE;
    BOOST_TEST(f.fire(-1) == (Names{"one", "two", "three"}), boost::test_tools::per_element());
    BOOST_REQUIRE(g_results_seen.size() == 3u);
    BOOST_TEST(g_results_seen[0].empty());
    BOOST_TEST(g_results_seen[1] ==
                   (Names{"one=" + std::to_string(PMIX_EVENT_NO_ACTION_TAKEN) + "+ret.one"}),
               boost::test_tools::per_element());
    BOOST_TEST(g_results_seen[2] ==
                   (Names{"one=" + std::to_string(PMIX_EVENT_NO_ACTION_TAKEN) + "+ret.one",
                          "two=" + std::to_string(PMIX_EVENT_PARTIAL_ACTION_TAKEN) + "+ret.two"}),
               boost::test_tools::per_element());
}

// What the library reads of a chain (its answer to PMIX_GROUP_LEADER_FAILED): every handler's
// status and results, the one that ended the chain included.
BOOST_AUTO_TEST_CASE(the_chains_completion_gets_every_handlers_results) {
    Fixture f;
    f.add("one", {-1});
    f.add("two", {-1});
    f.add("three", {-1});
    g_answer["two"] = PMIX_EVENT_ACTION_COMPLETE;
    msg::Event wire;
    wire.status = -1;
    wire.source = {"job1", 1};
    auto ev = LocalEvent::from_wire(wire);
    Names got;
    pmix_status_t last = PMIX_ERROR;
    EventChain::run(
        f.reg, ev, f.reg.chain_for(*ev), [](std::function<void()> fn) { fn(); },
        [&](pmix_status_t status, const pmix_info_t *results, size_t n) {
            last = status;
            for (size_t i = 0; i < n; ++i) {
                const auto *arr = results[i].value.data.darray;
                const auto *items = static_cast<pmix_info_t *>(arr->array);
                got.push_back(std::string(results[i].key) + "=" +
                              std::to_string(items[0].value.data.status) + "+" + items[1].key);
            }
        });
    BOOST_TEST(g_ran == (Names{"one", "two"}), boost::test_tools::per_element());
    BOOST_TEST(last == PMIX_EVENT_ACTION_COMPLETE);
    BOOST_TEST(got == (Names{"one=" + std::to_string(PMIX_SUCCESS) + "+ret.one",
                             "two=" + std::to_string(PMIX_EVENT_ACTION_COMPLETE) + "+ret.two"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_handler_may_deregister_itself) {
    Fixture f;
    g_self_remove = f.add("once", {-1});
    f.add("always", {-1});
    BOOST_TEST(f.fire(-1) == (Names{"once", "always"}), boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1) == (Names{"always"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(source_range_affected_and_class_filters) {
    Fixture f;
    pmix_info_t ns;
    PMIX_INFO_CONSTRUCT(&ns);
    pmix_data_range_t r = PMIX_RANGE_NAMESPACE;
    PMIx_Info_load(&ns, PMIX_RANGE, &r, PMIX_DATA_RANGE);
    f.add("my-job", {-1}, {ns});
    pmix_info_t rm;
    PMIX_INFO_CONSTRUCT(&rm);
    r = PMIX_RANGE_RM;
    PMIx_Info_load(&rm, PMIX_RANGE, &r, PMIX_DATA_RANGE);
    f.add("from-rm", {-1}, {rm});
    pmix_proc_t members[2];
    PMIX_LOAD_PROCID(&members[0], "job2", 4);
    PMIX_LOAD_PROCID(&members[1], "job3", PMIX_RANK_WILDCARD);
    pmix_data_array_t arr{PMIX_PROC, 2, members};
    pmix_info_t custom;
    PMIX_INFO_CONSTRUCT(&custom);
    PMIx_Info_load(&custom, PMIX_EVENT_CUSTOM_RANGE, &arr, PMIX_DATA_ARRAY);
    f.add("custom", {-1}, {custom});
    pmix_proc_t hit;
    PMIX_LOAD_PROCID(&hit, "job1", 5);
    pmix_info_t aff;
    PMIX_INFO_CONSTRUCT(&aff);
    PMIx_Info_load(&aff, PMIX_EVENT_AFFECTED_PROC, &hit, PMIX_PROC);
    f.add("about-5", {-1}, {aff});
    f.add("enviro-only", {-1}, {flag(kEventEnviroLevel)});
    f.add("both", {-1}, {flag(kEventEnviroLevel), flag(kEventJobLevel)});

    BOOST_TEST(f.fire(-1, {"job1", 2}) == (Names{"my-job", "both"}),
               boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1, {"broker", 0}) == (Names{"from-rm", "both"}),
               boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1, {"job3", 7}) == (Names{"custom", "both"}),
               boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1, {"job2", 5}) == (Names{"both"}), boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1, {"job2", 5}, false, false, {{"job1", 5}}) == (Names{"about-5", "both"}),
               boost::test_tools::per_element());
    BOOST_TEST(f.fire(-1, {"job2", 5}, false, true) == (Names{"enviro-only", "both"}),
               boost::test_tools::per_element());
}

// OpenPMIx's tool example filters its children's end on its own namespace: a job's end addressed
// to this process (its spawner) passes that filter; one addressed to another does not, nor does
// another event about another job.
BOOST_AUTO_TEST_CASE(a_spawner_filtering_on_its_own_namespace_hears_its_child_s_end) {
    Fixture f;
    pmix_proc_t mine;
    PMIX_LOAD_PROCID(&mine, "job1", PMIX_RANK_WILDCARD);
    pmix_info_t aff;
    PMIX_INFO_CONSTRUCT(&aff);
    PMIx_Info_load(&aff, PMIX_EVENT_AFFECTED_PROC, &mine, PMIX_PROC);
    f.add("children", {PMIX_EVENT_JOB_END, -1}, {aff});
    auto fire = [&](pmix_status_t code, msg::Proc to) {
        g_ran.clear();
        msg::Event wire;
        wire.status = code;
        wire.source = {"broker", 0};
        wire.range = PMIX_RANGE_CUSTOM;
        wire.custom_range = {to};
        wire.affected = {{"child", PMIX_RANK_WILDCARD}};
        wire.non_default = true;
        auto ev = LocalEvent::from_wire(wire);
        EventChain::run(f.reg, ev, f.reg.chain_for(*ev), [](std::function<void()> fn) { fn(); });
        return g_ran;
    };
    BOOST_TEST(fire(PMIX_EVENT_JOB_END, {"job1", 0}) == (Names{"children"}),
               boost::test_tools::per_element());
    BOOST_TEST(fire(PMIX_EVENT_JOB_END, {"job9", 0}).empty());
    BOOST_TEST(fire(-1, {"job1", 0}).empty());
}

BOOST_AUTO_TEST_CASE(event_fields_reach_the_handler_as_attributes) {
    msg::Event wire;
    wire.status = -5;
    wire.source = {"job1", 2};
    wire.affected = {{"job1", 3}};
    wire.text = "hello";
    wire.timestamp = 1234;
    pmix_info_t in;
    PMIX_INFO_CONSTRUCT(&in);
    PMIx_Info_load(&in, PMIX_EVENT_TEXT_MESSAGE, "hello", PMIX_STRING);
    pmix_info_t extra;
    PMIX_INFO_CONSTRUCT(&extra);
    const int code = 7;
    PMIx_Info_load(&extra, PMIX_EXIT_CODE, &code, PMIX_INT);
    pmix_info_t both[2] = {in, extra};
    msg::Event encoded;
    bool no_cache = true;
    BOOST_REQUIRE(LocalEvent::to_wire(-5, wire.source == msg::Proc{"job1", 2} ? [] {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "job1", 2);
        return p;
    }() : pmix_proc_t{}, PMIX_RANGE_NAMESPACE, both, 2, encoded, no_cache) == PMIX_SUCCESS);
    BOOST_TEST(!no_cache);
    BOOST_TEST(encoded.text == "hello");
    wire.info = encoded.info;
    auto ev = LocalEvent::from_wire(wire);
    std::map<std::string, const pmix_value_t *> by_key;
    for (size_t i = 0; i < ev->ninfo; ++i) by_key[ev->info[i].key] = &ev->info[i].value;
    BOOST_REQUIRE(by_key.contains(PMIX_EXIT_CODE));
    BOOST_TEST(by_key[PMIX_EXIT_CODE]->data.integer == 7);
    BOOST_REQUIRE(by_key.contains(PMIX_EVENT_AFFECTED_PROC));
    BOOST_TEST(by_key[PMIX_EVENT_AFFECTED_PROC]->data.proc->rank == 3u);
    BOOST_TEST(std::string(by_key[PMIX_EVENT_TEXT_MESSAGE]->data.string) == "hello");
    BOOST_TEST(by_key[PMIX_EVENT_TIMESTAMP]->data.time == 1234);
    PMIX_INFO_DESTRUCT(&in);
    PMIX_INFO_DESTRUCT(&extra);
}

BOOST_AUTO_TEST_CASE(streams_deliver_in_order_once_and_report_gaps) {
    StreamTracker t;
    auto ev = [](std::uint64_t seq) {
        msg::Event e;
        e.stream = "ev/g/j/";
        e.seq = seq;
        return e;
    };
    std::optional<StreamTracker::Gap> gap;
    // Before the registration's answer: kept, then filtered by the head.
    BOOST_TEST(t.accept(ev(5), gap).empty());
    BOOST_TEST(t.accept(ev(6), gap).empty());
    auto early = t.start("ev/g/j/", 5, gap);
    BOOST_REQUIRE(early.size() == 1u);
    BOOST_TEST(early[0].seq == 6u);
    BOOST_TEST(!gap);
    BOOST_TEST(t.accept(ev(6), gap).empty());  // duplicate
    BOOST_TEST(t.accept(ev(9), gap).empty());
    BOOST_REQUIRE(gap);
    BOOST_TEST(gap->from == 7u);
    BOOST_TEST(gap->to == 8u);
    gap.reset();
    BOOST_TEST(t.accept(ev(10), gap).empty());
    BOOST_TEST(!gap);  // 7..8 asked for already
    // The broker has 8 only: 7 is lost, 8..10 come out in order.
    auto filled = t.fill("ev/g/j/", 7, 8, {ev(8)});
    BOOST_REQUIRE(filled.size() == 3u);
    BOOST_TEST(filled[0].seq == 8u);
    BOOST_TEST(filled[2].seq == 10u);
    BOOST_TEST(t.lost() == 1u);
    BOOST_TEST(t.upto().at("ev/g/j/") == 10u);
}
