#include "broker/tcp_publisher.hpp"

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix {

TcpPublisher::TcpPublisher(Reactor &reactor, zmq::context_t &ctx, Settings settings)
    : reactor_(reactor), settings_(settings), xpub_(ctx, zmq::socket_type::xpub) {}

std::string TcpPublisher::bind(const std::string &tcp, const std::string &secret_key) {
    xpub_.set(zmq::sockopt::linger, 0);
    xpub_.set(zmq::sockopt::curve_server, 1);
    xpub_.set(zmq::sockopt::curve_secretkey, secret_key);
    xpub_.set(zmq::sockopt::zap_domain, "zpmix");
    xpub_.set(zmq::sockopt::sndhwm, settings_.sndhwm);
    xpub_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(zmtp::kTcpFrameLimit));
    // Every (un)subscription, repeated ones too: a registration's sync topic must be seen.
    xpub_.set(zmq::sockopt::xpub_verboser, 1);
    xpub_.set(zmq::sockopt::heartbeat_ivl, settings_.heartbeat_ivl_ms);
    xpub_.set(zmq::sockopt::heartbeat_timeout, settings_.heartbeat_timeout_ms);
    xpub_.set(zmq::sockopt::handshake_ivl, settings_.handshake_timeout_ms);
    const auto colon = tcp.rfind(':');
    xpub_.bind((colon == std::string::npos ? tcp : tcp.substr(0, colon)) + ":*");
    reactor_.watch(xpub_, [this] { on_readable(); });
    return xpub_.get(zmq::sockopt::last_endpoint);
}

void TcpPublisher::close() {
    if (xpub_) xpub_.close();
}

std::size_t TcpPublisher::publish(std::string_view topic, std::string_view body) {
    if (!xpub_) return 0;  // closed: the broker is stopping
    // An XPUB never blocks: a subscriber at its high-water mark loses the message.
    xpub_.send(zmq::const_buffer(topic.data(), topic.size()),
               zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    xpub_.send(zmq::const_buffer(body.data(), body.size()), zmq::send_flags::dontwait);
    return 0;
}

void TcpPublisher::on_readable() {
    for (int n = 0; n < 256; ++n) {
        zmq::message_t m;
        if (!xpub_.recv(m, zmq::recv_flags::dontwait)) return;
        if (m.size() == 0 || !on_subscription_) continue;
        const auto *b = static_cast<const char *>(m.data());
        if (b[0] == 0 || b[0] == 1)
            on_subscription_(b[0] == 1, std::string_view(b + 1, m.size() - 1));
    }
}

}  // namespace zpmix
