// tree_model: a discrete-event model of the broker tree at scale, driving the real gather engine
// (actors/tree/gather.*, the one the fence and group actors use) with a virtual clock.
//
// Every broker and every rank is a process with a run queue; what a process does costs CPU time
// taken from a core: its own (a cluster: one core per broker, --cores 0) or one of a pool all
// share (this host: --cores 2, for validation against the measured runs). A broker's handler runs
// to its end before the next (the reactor); the messages it sends leave in order as it writes
// them, each costing the sender send_us + byte_us per byte, then wire_us (+ wire_byte_us per byte)
// on the link, then recv_us + byte_us per byte of the receiver's CPU before its handler runs.
// Ranks reach their broker over ipc (ipc_us each way, local_us of the broker's CPU per message
// in, release_us per rank out, rank_us of the rank's own CPU per fence, half in the call and half
// in the return); a collecting fence's card goes in the rank's commit, a message before its fence.
//
// Figures: the barrier (no data), the collect (4 KiB per rank: the gather's parts grow up the tree
// and the whole comes down; the model's reduce adds sizes, the bytes are costs, never copies) and
// launch+init+finalize (boot through an rsh agent, the job's launch and end: launch() below).
// Parameters: measured on this host by tests/bench/run_model, or fitted where it says
// (tests/bench/RESULTS.md, "The tree at scale, modelled").
//
//   tree_model [--nodes 64,1024,16384] [--radix 2,8,32] [--ppn 2] [--cores 0] [--root-ranks]
//              [--PARAM value]...        (prints a markdown table, run_scale's columns: nodes,
//                                         radix, height, barrier, collect, launch; us)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include "actors/tree/gather.hpp"
#include "actors/tree/topology.hpp"

using zpmix::tree::Bytes;
using zpmix::tree::Gather;
using zpmix::tree::Rank;
using zpmix::tree::Status;
using zpmix::tree::Topology;

namespace {

// The defaults: tests/bench/run_model's calibration on this host (tests/bench/RESULTS.md).
struct Params {
    double send_us = 13.51, recv_us = 13.51, byte_us = 0.00108;  // a broker's CPU per tree message
    double wire_us = 7, wire_byte_us = 0;                        // the link, one way
    double ipc_us = 7, local_us = 10.16, release_us = 10.16;     // ranks and their broker
    double rank_us = 14.79;                                      // a rank's own CPU per fence
    double header_bytes = 120;  // a tree message's envelope and box
    double spawn_us = 139, broker_start_us = 16750, handshake_us = 150;
    double part_bytes = 2048, fork_us = 300, rank_life_us = 7950, fixed_us = 11510;
    int ppn = 2, cores = 0;
    bool root_ranks = false;  // the root's node runs ranks too (a root inside the allocation)
};

// One process: a broker (or a rank), its run queue and its CPU.
struct Task {
    double cost;
    std::function<void()> run;
};

class Sim {
  public:
    explicit Sim(const Params &p, std::size_t processes) : p_(p), procs_(processes) {}

    double now() const { return now_; }
    // Inside a task: when what it does next happens (its start plus what it spent so far).
    double clock() const { return task_start_ + extra_; }
    void at(double t, std::function<void()> fn) { events_.push({t, seq_++, std::move(fn)}); }
    // Work for process `who`: `run` happens when its turn comes; its cost and what it sends cost
    // the process's CPU for as long.
    void submit(std::size_t who, double cost, std::function<void()> run) {
        procs_[who].queue.push_back({cost, std::move(run)});
        try_start(who);
    }
    // From inside a task of `from`: a message of `bytes` to process `to`, handled by `handler`
    // on its turn; `hop` says whether it crosses a link (else ipc).
    void send(std::size_t from, std::size_t to, double bytes, bool hop,
              std::function<void()> handler) {
        const double out = hop ? p_.send_us + p_.byte_us * bytes : 0.5;
        extra_ += out;
        const double leave = task_start_ + extra_;
        (void)from;
        const double travel = hop ? p_.wire_us + p_.wire_byte_us * bytes : p_.ipc_us;
        const double in = hop ? p_.recv_us + p_.byte_us * bytes : 0;
        at(leave + travel, [this, to, in, handler = std::move(handler)]() mutable {
            submit(to, in, std::move(handler));
        });
    }
    // Extra CPU for the task running now.
    void spend(double us) { extra_ += us; }
    void run() {
        while (!events_.empty()) {
            Event e = events_.top();
            events_.pop();
            now_ = e.t;
            e.fn();
        }
    }

  private:
    struct Event {
        double t;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator<(const Event &o) const { return t > o.t || (t == o.t && seq > o.seq); }
    };
    struct Proc {
        std::deque<Task> queue;
        bool busy = false, waiting = false;
    };

    const Params &p_;
    std::vector<Proc> procs_;
    std::priority_queue<Event> events_;
    std::uint64_t seq_ = 0;
    double now_ = 0, task_start_ = 0, extra_ = 0;
    int cores_busy_ = 0;
    std::deque<std::size_t> want_core_;  // shared cores: processes waiting, in order

    void try_start(std::size_t who) {
        Proc &pr = procs_[who];
        if (pr.busy || pr.queue.empty()) return;
        if (p_.cores > 0 && cores_busy_ >= p_.cores) {
            if (!pr.waiting) {
                pr.waiting = true;
                want_core_.push_back(who);
            }
            return;
        }
        pr.busy = true;
        ++cores_busy_;
        Task t = std::move(pr.queue.front());
        pr.queue.pop_front();
        task_start_ = now_;
        extra_ = t.cost;
        t.run();
        const double done = task_start_ + extra_;
        at(done, [this, who] {
            procs_[who].busy = false;
            --cores_busy_;
            try_start(who);
            while (p_.cores > 0 && cores_busy_ < p_.cores && !want_core_.empty()) {
                const std::size_t next = want_core_.front();
                want_core_.pop_front();
                procs_[next].waiting = false;
                try_start(next);
            }
        });
    }
};

// The model's reduce: a part is its size in bytes (8 bytes of text); sizes add up the tree.
double size_of(const Bytes &b) {
    return b.empty() ? 0 : std::strtod(b.c_str(), nullptr);
}
Bytes sized(double n) {
    return std::to_string(static_cast<long long>(n));
}

// Brokers for `nodes` nodes with ranks: and the root's, beside `zpmix run`, unless it runs ranks.
Rank brokers_for(const Params &p, Rank nodes) {
    return p.root_ranks ? nodes : nodes + 1;
}

// One fence over every rank of every broker (ranks on the root only with root_ranks); its time
// from the ranks' calls to the last rank's return, in µs.
double fence(const Params &p, Rank brokers, Rank radix, double card_bytes) {
    const Topology topo(brokers, radix);
    const int ppn = p.ppn;
    auto ranks_of = [&](Rank b) { return (b == 0 && !p.root_ranks && brokers > 1) ? 0 : ppn; };
    // Processes: brokers 0..N-1, then ppn ranks per broker.
    Sim sim(p, brokers + static_cast<std::size_t>(brokers) * ppn);
    auto rank_proc = [&](Rank b, int i) { return brokers + static_cast<std::size_t>(b) * ppn + i; };
    std::vector<std::unique_ptr<Gather>> g(brokers);
    std::vector<int> arrived(brokers, 0);
    double last_return = 0;
    for (Rank b = 0; b < brokers; ++b) {
        Gather::Callbacks cb{
            [&, b](Rank parent, const std::string &key, Status s, const Bytes &payload) {
                sim.send(
                    b, parent, p.header_bytes + size_of(payload), true,
                    [&, b, parent, key, s, payload] { g[parent]->from_child(b, key, s, payload); });
            },
            [&, b](Rank child, const std::string &key, Status s, const Bytes &payload) {
                sim.send(b, child, p.header_bytes + size_of(payload), true,
                         [&, child, key, s, payload] { g[child]->from_parent(key, s, payload); });
            },
            [&, b](const std::string &, Status, const Bytes &result) {
                // The result to each local rank (a segment, then one message each).
                sim.spend(p.byte_us * size_of(result));
                for (int i = 0; i < ranks_of(b); ++i) {
                    sim.spend(p.release_us);
                    sim.send(b, rank_proc(b, i), 0, false, [&, b, i] {
                        sim.spend(p.rank_us / 2);  // the return
                        (void)b;
                        (void)i;
                        last_return = std::max(last_return, sim.clock());
                    });
                }
            },
            [](std::string_view) {}};
        g[b] = std::make_unique<Gather>(topo, b, cb,
                                        [](const std::string &, const Bytes *local,
                                           const std::vector<Bytes> &children, Bytes &out) {
                                            double n = local ? size_of(*local) : 0;
                                            for (const auto &c : children) n += size_of(c);
                                            out = sized(n);
                                            return Status{0};
                                        });
    }
    for (Rank b = 0; b < brokers; ++b) {
        if (ranks_of(b) == 0) {
            sim.at(0,
                   [&, b] { sim.submit(b, 0, [&, b] { g[b]->contribute_local("f", sized(0)); }); });
            continue;
        }
        // A collecting fence's card goes to the broker first, in the rank's commit.
        for (int i = 0; i < ranks_of(b); ++i)
            sim.at(0, [&, b, i] {
                sim.submit(rank_proc(b, i), p.rank_us * (card_bytes > 0 ? 1.5 : 0.5), [&, b, i] {
                    if (card_bytes > 0)
                        sim.send(rank_proc(b, i), b, card_bytes, false,
                                 [&] { sim.spend(p.local_us + p.byte_us * card_bytes); });
                    sim.send(rank_proc(b, i), b, 0, false, [&, b] {
                        sim.spend(p.local_us);
                        if (++arrived[b] == ranks_of(b))
                            g[b]->contribute_local("f", sized(card_bytes * ranks_of(b)));
                    });
                });
            });
    }
    sim.run();
    return last_return;
}

// Boot through an rsh agent, a job's launch and its end, in µs: `zpmix run`'s own start and stop
// (fixed_us), the root's spawn of each broker's agent (spawn_us of its CPU, serial), each broker's
// start (broker_start_us of its own CPU), its handshake with its parent (handshake_us at each
// end) and hello to the root, which then starts that broker's children; once all are up the
// coordinator's part goes down the tree to each broker, which forks its ranks (fork_us each);
// each rank runs init and finalize (rank_life_us of its CPU) and says it ended (ipc); each
// broker's report goes up to the root.
double launch(const Params &p, Rank brokers, Rank radix) {
    const Topology topo(brokers, radix);
    const int ppn = p.ppn;
    auto ranks_of = [&](Rank b) { return (b == 0 && !p.root_ranks && brokers > 1) ? 0 : ppn; };
    Sim sim(p, brokers + static_cast<std::size_t>(brokers) * ppn);
    auto rank_proc = [&](Rank b, int i) { return brokers + static_cast<std::size_t>(b) * ppn + i; };
    // A message from b to `to` along the tree (up to the common ancestor, then down).
    std::function<void(Rank, Rank, double, std::function<void()>)> route;
    route = [&](Rank b, Rank to, double bytes, std::function<void()> done) {
        if (b == to) return done();
        Rank next;
        if (auto c = topo.child_toward(b, to))
            next = *c;
        else
            next = *topo.parent(b);
        sim.send(b, next, p.header_bytes + bytes, true,
                 [&, next, to, bytes, done] { route(next, to, bytes, done); });
    };
    Rank online = 1, reported = 0;
    std::vector<int> ended(brokers, 0);
    double end = 0;
    auto report = [&](Rank b) {
        route(b, 0, 200, [&] {
            if (++reported == brokers) end = sim.clock();
        });
    };
    auto job = [&] {
        for (Rank b = 0; b < brokers; ++b) {
            if (ranks_of(b) == 0) {
                ++reported;
                continue;
            }
            route(0, b, p.part_bytes, [&, b] {
                for (int i = 0; i < ranks_of(b); ++i) {
                    sim.spend(p.fork_us);
                    sim.send(b, rank_proc(b, i), 0, false, [&, b, i] {
                        sim.spend(p.rank_life_us);
                        sim.send(rank_proc(b, i), b, 0, false, [&, b] {
                            sim.spend(p.local_us);
                            if (++ended[b] == ranks_of(b)) report(b);
                        });
                    });
                }
            });
        }
    };
    std::function<void(Rank)> start_children;
    start_children = [&](Rank parent) {
        for (Rank c : topo.children(parent)) {
            sim.spend(p.spawn_us);  // the root forks the agent that starts broker c
            sim.send(0, c, 0, false, [&, c, parent] {
                // Up: it starts, connects to its parent and handshakes, then says hello.
                sim.spend(p.broker_start_us + p.handshake_us);
                sim.send(c, parent, p.header_bytes, true, [&, parent, c] {
                    sim.spend(p.handshake_us);
                    route(parent, 0, 100, [&, c] {
                        start_children(c);
                        if (++online == brokers) job();
                    });
                });
            });
        }
    };
    sim.at(0, [&] {
        sim.submit(0, 0, [&] {
            if (brokers == 1) return job();
            start_children(0);
        });
    });
    sim.run();
    return p.fixed_us + end;
}

std::vector<long> list_of(const char *s) {
    std::vector<long> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stol(item));
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    Params p;
    std::vector<long> brokers = {64, 1024, 16384}, radixes = {2, 8, 32};
    std::map<std::string, double *> knobs = {
        {"send_us", &p.send_us},           {"recv_us", &p.recv_us},
        {"byte_us", &p.byte_us},           {"wire_us", &p.wire_us},
        {"wire_byte_us", &p.wire_byte_us}, {"ipc_us", &p.ipc_us},
        {"local_us", &p.local_us},         {"release_us", &p.release_us},
        {"rank_us", &p.rank_us},           {"header_bytes", &p.header_bytes},
        {"spawn_us", &p.spawn_us},         {"broker_start_us", &p.broker_start_us},
        {"handshake_us", &p.handshake_us}, {"part_bytes", &p.part_bytes},
        {"fork_us", &p.fork_us},           {"rank_life_us", &p.rank_life_us},
        {"fixed_us", &p.fixed_us}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        if (a == "--nodes" && has) {
            brokers = list_of(argv[++i]);
        } else if (a == "--radix" && has) {
            radixes = list_of(argv[++i]);
        } else if (a == "--ppn" && has) {
            p.ppn = std::atoi(argv[++i]);
        } else if (a == "--cores" && has) {
            p.cores = std::atoi(argv[++i]);
        } else if (a == "--root-ranks") {
            p.root_ranks = true;
        } else if (a.starts_with("--") && knobs.contains(a.substr(2)) && has) {
            *knobs[a.substr(2)] = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr,
                         "usage: tree_model [--nodes L] [--radix L] [--ppn N] [--cores N] "
                         "[--root-ranks] [--PARAM value]...\n");
            return 2;
        }
    }
    std::printf(
        "| nodes | radix | tree height | barrier (us) | collect 4 KiB (us) | "
        "launch+init+finalize (us) |\n| --- | --- | --- | --- | --- | --- |\n");
    for (long n : brokers)
        for (long k : radixes) {
            const Rank total = brokers_for(p, static_cast<Rank>(n));
            const Topology t(total, static_cast<Rank>(k));
            std::printf("| %ld | %ld | %u | %.1f | %.1f | %.0f |\n", n, k, t.height(),
                        fence(p, total, static_cast<Rank>(k), 0),
                        fence(p, total, static_cast<Rank>(k), 4096),
                        launch(p, total, static_cast<Rank>(k)));
            std::fflush(stdout);
        }
    return 0;
}
