#!/usr/bin/python3
"""A rank that makes its launcher log without end (test_faults.sh, "log flood"), for SECONDS.

Under zpmix (ZPMIX_URI set): as the client it is, messages the dispatcher refuses (bytes that are
not msgpack, an internal type, an unknown type), a body that does not decode, a commit acting for
another rank; and, every 100 of them, a new connection with a bad greeting and one whose Hello
claims a namespace that does not exist. Each is answered or closed, and the broker says why in
its log. Then a request of its own: "served <status>" (0: answered).
Under mpirun (PMIX_SERVER_URI4 or older set, OpenPMIx's "nspace.rank;tcp4://host:port"): bad
connections to its PMIx server (a greeting of garbage), as many as it takes.
Prints "sent <messages> messages <connections> connections in <s> s".
usage (as a rank): log_flood.py PROTOCOL SECONDS"""
import os
import socket
import sys
import time

import msgpack
import zmq

GARBAGE = b"GET / HTTP/1.0\r\n\r\n" + b"\xff" * 46


def bad_connection(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(address)
        s.sendall(GARBAGE)
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):  # until it closes
            pass
    except OSError:
        pass
    finally:
        s.close()


def zpmix_flood(protocol, seconds):
    uri = os.environ["ZPMIX_URI"]
    me = {"nspace": os.environ["PMIX_NAMESPACE"], "rank": int(os.environ["PMIX_RANK"])}
    ctx = zmq.Context()

    def dealer():
        d = ctx.socket(zmq.DEALER)
        d.setsockopt(zmq.LINGER, 0)
        d.setsockopt(zmq.RCVHWM, 0)  # the answers are read as they come, never held back
        d.connect(uri)
        return d

    def envelope(t, rid, body):
        return msgpack.packb({"v": protocol, "t": t, "id": rid, "body": body})

    def ask(d, t, rid, body):
        d.send(envelope(t, rid, body))
        while d.poll(10000):
            reply = msgpack.unpackb(d.recv(), raw=False)
            if reply.get("id") == rid:
                return reply["body"]["status"] if reply["t"] == "reply.error" else 0
        return "timeout"

    s = dealer()
    hello = {"role": "client", "nspace": me["nspace"], "rank": me["rank"], "pid": os.getpid()}
    status = ask(s, "session.hello", 1, hello)
    if status != 0:
        print("hello", status, flush=True)
        return
    other = {"nspace": me["nspace"], "rank": me["rank"] + 1}
    kinds = [
        b"\x93not msgpack at all",
        envelope("ns.register", 2, {}),
        envelope("no.such.type", 3, {}),
        envelope("modex.commit", 4, 5),
        envelope("modex.commit", 5, {"proc": other, "local": b"", "remote": b"", "global": b""}),
    ]
    path = uri[len("ipc://"):]
    messages, connections = 0, 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        for _ in range(20):
            for k in kinds:
                s.send(k)
                messages += 1
        while s.poll(0):
            s.recv()
        if messages % 100 == 0:
            bad_connection(socket.AF_UNIX, path)
            stranger = dealer()
            ask(stranger, "session.hello", 1, dict(hello, nspace="no-such-namespace"))
            stranger.close()
            connections += 2
    elapsed = time.monotonic() - start
    print(f"sent {messages} messages {connections} connections in {elapsed:.1f} s", flush=True)
    print("served", ask(s, "ns.query", 9, {"nspace": me["nspace"]}), flush=True)


def pmix_flood(seconds):
    uri = ""
    for key in ("PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"):
        uri = os.environ.get(key, "")
        if uri:
            break
    address = uri.split(";", 1)[-1]
    if not address.startswith("tcp4://"):
        print("no PMIx server address in the environment:", uri, flush=True)
        return
    host, port = address[len("tcp4://"):].rsplit(":", 1)
    connections = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        bad_connection(socket.AF_INET, (host, int(port)))
        connections += 1
    elapsed = time.monotonic() - start
    print(f"sent 0 messages {connections} connections in {elapsed:.1f} s", flush=True)


def main():
    protocol, seconds = int(sys.argv[1]), float(sys.argv[2])
    if os.environ.get("ZPMIX_URI", "").startswith("ipc://"):
        zpmix_flood(protocol, seconds)
    else:
        pmix_flood(seconds)


if __name__ == "__main__":
    main()
