#pragma once
// What `zpmix run` prints and exits with. The job's output (msg::Output, relayed by the broker)
// goes to this process's stdout or stderr as it comes: with --tag-output, each line prefixed with
// [nspace,rank]<stream>: ([nspace,rank,node] when its job spans nodes), with --timestamp-output by
// the time it is printed first (mpirun's: `Sat Nov 28 12:00:00 2026[nspace,rank]<stdout>: `, or
// `Sat Nov 28 12:00:00 2026<stdout>: ` alone), and with
// --output-filename also, untagged, to DIR/<job>/rank.<N>/stdout|stderr (Open MPI's layout: the
// launched job is 1, the jobs it spawns 2, 3, ... as they first speak). The launched job's end
// (msg::JobEnded) is the exit status; a spawned job's end is only a line on stderr when it failed.
// `zpmix run`'s own failures are a line on stderr and an exit status of their own (fail()).
//
// Nothing is lost: output is written by a thread of its own (OutputWriter), which may block on
// a slow stdout while the relay goes on with signals, stdin and the job's end; what it has
// written is acknowledged to the launchers (msg::OutputAck), which read the ranks' pipes only
// while `zpmix run` keeps up, so the ranks wait on a slow reader as under mpirun.
//
// Invariants and limits:
// - Each piece of output is written whole and in the order it came; a rank's lines are never
//   split (the launcher sends whole lines).
// - A tag goes at the start of a line only: output that ends inside a line is continued by the
//   next of the same rank and stream, untagged.
// - A closed stdout drops the output (counted as written, so the job goes on).
// - The exit waits until every piece of output is written (ended()).
// - A file that cannot be opened is said once on stderr and not written; the launched job's are
//   all opened before its output comes (open_files()), and one that fails gives up the job.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "actors/protocol/job.hpp"

namespace zpmix::cli::run {

// Exit statuses of `zpmix run` itself failing (not the job's).
inline constexpr int kFailed = 1, kNotExecutable = 126, kNotFound = 127;

// "zpmix run: <message>" on stderr; returns `status`.
int fail(const std::string &message, int status = kFailed);

// What `zpmix run` exits with when the broker refuses the launch (as a shell does for a program).
int exit_status_of(std::int32_t error);

// --output-filename DIR: each rank's output also goes to DIR/<job>/rank.<N>/stdout|stderr, as
// Open MPI lays it out (the launched job is 1, the jobs it spawns 2, 3, ... as they speak).
class OutputFiles {
  public:
    explicit OutputFiles(std::string dir) : dir_(std::move(dir)) {}
    OutputFiles(const OutputFiles &) = delete;
    OutputFiles &operator=(const OutputFiles &) = delete;
    ~OutputFiles();
    bool enabled() const { return !dir_.empty(); }
    // Opens (creates, empties) the file; false and a message when it cannot.
    bool open(const std::string &nspace, std::uint32_t rank, int stream);
    void write(const std::string &nspace, std::uint32_t rank, int stream, std::string_view data);

  private:
    static constexpr int kFailed = -2;
    std::string dir_;
    std::map<std::tuple<std::string, std::uint32_t, int>, int> files_;
    std::map<std::string, std::size_t> jobs_;
};

// Writes to our stdout and stderr on a thread of its own, in the order given, and counts what it
// wrote per flow (the launcher and job it came from), for the acknowledgements.
class OutputWriter {
  public:
    using Flow = std::pair<std::uint32_t, std::string>;  // (broker, nspace)
    OutputWriter();
    ~OutputWriter();  // what is still queued is given up (the process is ending)
    OutputWriter(const OutputWriter &) = delete;
    OutputWriter &operator=(const OutputWriter &) = delete;

    // Queues `data` for fd (1 or 2); `credit` bytes of `flow` are acknowledged once it is written.
    void write(int fd, std::string data, const Flow &flow, std::uint64_t credit);
    // Readable when written() has something.
    int ready_fd() const { return event_fd_; }
    // The bytes written since the last call, per flow.
    std::map<Flow, std::uint64_t> written();
    // Blocks until everything queued is written.
    void flush();

  private:
    struct Piece {
        int fd;
        std::string data;
        Flow flow;
        std::uint64_t credit;
    };
    struct State;
    std::shared_ptr<State> state_;  // shared with the thread, which may outlive us (a stuck write)
    int event_fd_ = -1;
};

// The job's output and end, as this process prints them.
class JobOutput {
  public:
    JobOutput(bool tag_output, bool timestamp_output, std::string output_filename)
        : tag_(tag_output), timestamp_(timestamp_output), files_(std::move(output_filename)) {}

    // --output-filename: the files of the launched job's ranks 0..np-1, both streams; false (and
    // said) when one cannot be opened.
    bool open_files(const std::string &nspace, std::uint32_t np);
    // A piece of a rank's output: to our stdout or stderr, and its file.
    void print(msg::Output out);
    // The writer's descriptor: when it is readable, written() says what to acknowledge.
    int written_fd() const { return writer_.ready_fd(); }
    std::vector<msg::OutputAck> written();
    // A job's end: the exit status when it is the launched job `launched` (once its output is
    // written), none when it is a job that one spawned.
    std::optional<int> ended(const msg::JobEnded &e, const std::string &launched);

  private:
    const bool tag_, timestamp_;
    OutputFiles files_;
    OutputWriter writer_;
    // (nspace, rank, fd) -> inside a line
    std::map<std::tuple<std::string, std::uint32_t, int>, bool> mid_line_;
    // Per flow: bytes written, and acknowledged.
    std::map<OutputWriter::Flow, std::pair<std::uint64_t, std::uint64_t>> flows_;
};

}  // namespace zpmix::cli::run
