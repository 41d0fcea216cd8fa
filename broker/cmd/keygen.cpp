// `zpmix keygen FILE`: a CURVE keypair for a standing tree ([tree] key_file) or a broker's tcp
// ([broker] tcp_key_file): one line "PUBLIC SECRET" (Z85), mode 0600, never over another file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "actors/runtime/curve_keys.hpp"
#include "broker/cmd/commands.hpp"

namespace zpmix::cli {

namespace {

int run_keygen(const std::string &path) {
    CurveKeypair keys;
    try {
        keys = CurveKeypair::generate();
    } catch (const std::exception &e) {
        std::cerr << "zpmix keygen: " << e.what() << "\n";
        return 1;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        std::cerr << "zpmix keygen: " << path << ": " << strerror(errno)
                  << (errno == EEXIST ? " (a keypair is not written over another file)" : "")
                  << "\n";
        return 1;
    }
    const std::string line = keys.text() + "\n";
    const bool ok = ::fchmod(fd, 0600) == 0 &&
                    ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const int err = errno;
    ::close(fd);
    if (!ok) {
        ::unlink(path.c_str());
        std::cerr << "zpmix keygen: " << path << ": " << strerror(err) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

void add_keygen_command(CLI::App &app, int &status) {
    auto path = std::make_shared<std::string>();
    auto *cmd = app.add_subcommand(
        "keygen", "Write a CURVE keypair (mode 0600) for [tree] key_file or [broker] tcp_key_file");
    cmd->add_option("file", *path, "Where to write it (a new file)")->required();
    cmd->callback([path, &status] { status = run_keygen(*path); });
}

}  // namespace zpmix::cli
