// zpmix_hello_peer URI [--uid UID]: connects (after setuid when asked), says Hello as a tool and
// prints what came back within two seconds: "welcome", "error <status>" or "nothing".
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "actors/protocol/common.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/envelope.hpp"

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (argc == 4 && std::strcmp(argv[2], "--uid") == 0) {
        const uid_t uid = static_cast<uid_t>(std::atoi(argv[3]));
        if (::setgid(uid) != 0 || ::setuid(uid) != 0) {
            std::perror("setuid");
            return 77;
        }
    }
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.connect(argv[1]);
    zpmix::msg::Hello hello;
    hello.role = "tool";
    hello.pid = ::getpid();
    s.send(zpmix::encode(hello.type, 1, hello), zmq::send_flags::none);
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(2000)) == 0) {
        std::puts("nothing");
        return 0;
    }
    zmq::message_t reply;
    (void)s.recv(reply);
    const auto env = zpmix::decode(reply);
    if (env.type == zpmix::msg::Welcome::type)
        std::puts("welcome");
    else
        std::printf("error %d\n", env.as<zpmix::msg::ErrorReply>().status);
    return 0;
}
