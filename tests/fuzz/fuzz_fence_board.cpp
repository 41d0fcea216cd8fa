// FenceBoard::open over files that are not boards, or boards a job's process scribbled on (the
// board is writable by all of the job's processes), and what a rank then reads of them. An input
// is a flags byte and bytes. Flags bit 0 clear: the file is the bytes. Set: the file is a real
// board of (flags >> 1 & 3) ranks (FenceBoard::create), the bytes written over it from byte
// 8 * (flags >> 3 & 3): over its magic, version, rank count or past the header's checked fields.
// open() must refuse what is not a board of this release with an error text; what it accepts
// must be readable (cards, arrivals, waits) without reading or writing outside the mapping.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "actors/protocol/shm/fence_board.hpp"

namespace {

using zpmix::FenceBoard;

// A fresh board of `ranks` ranks, as bytes.
std::string board_bytes(std::uint32_t ranks) {
    char dir[] = "/tmp/fuzz_fence_board.XXXXXX";
    if (!::mkdtemp(dir)) std::abort();
    const std::string path = std::string(dir) + "/board";
    if (!FenceBoard::create(path, ranks).empty()) std::abort();
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove_all(dir);
    return bytes;
}

const std::string &board_template(std::uint32_t ranks) {
    static const std::string boards[4] = {board_bytes(0), board_bytes(1), board_bytes(2),
                                          board_bytes(3)};
    return boards[ranks];
}

// The bytes as a file: one memfd, rewritten for every input, named by its /proc path.
const std::string &file_with(std::string_view bytes) {
    static const int fd = [] {
        const int f = ::memfd_create("fuzz_fence_board", MFD_CLOEXEC);
        if (f < 0) std::abort();
        return f;
    }();
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        std::abort();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0) return 0;
    const unsigned flags = data[0];
    const std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
    std::string file(bytes);
    if (flags & 1) {
        file = board_template(flags >> 1 & 3);
        const std::size_t at = 8 * (flags >> 3 & 3);
        file.replace(at, std::min(bytes.size(), file.size() - at),
                     bytes.substr(0, file.size() - at));
    }
    std::string error;
    const auto board = FenceBoard::open(file_with(file), error);
    if (!board) {
        if (error.empty()) __builtin_trap();  // a refusal says why
        return 0;
    }
    const std::uint32_t ranks = board->ranks();
    std::string card;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        (void)board->peek(r);
        card.clear();
        const FenceBoard::Card c = board->read_card(r, card);
        if (card.size() > FenceBoard::kCardMax || (c.too_big && !card.empty())) __builtin_trap();
    }
    for (std::uint32_t r = 0; r < ranks; ++r) {
        const std::uint32_t k = static_cast<std::uint32_t>(data[r % size]);
        if (board->arrive(r, k) == 0)
            (void)board->wait(k, FenceBoard::Clock::now(), [] { return true; });
    }
    if (ranks > 0) board->rank_ended(ranks - 1, -1);
    board->rank_ended(ranks, -1);  // out of range: ignored
    board->fail_all(-1);
    return 0;
}
