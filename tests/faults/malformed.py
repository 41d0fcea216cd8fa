#!/usr/bin/python3
"""Sends every input the fuzzers know (tests/fuzz/corpus and regressions) to a live broker over
its real sockets: each file's bytes raw on a fresh connection (as the ZMTP listener's fuzzer
reads them; over tcp each from a loopback address of its own), then as one message of a libzmq
DEALER without a session, then (the message corpus: type, NUL, body) as an envelope of that type
from a tool's session. Prints how many inputs went each way; the caller checks that the broker
still serves.
usage: malformed.py IPC_PATH [TCP_HOST:PORT] CORPUS_DIR..."""
import json
import os
import socket
import sys

import msgpack
import zmq



def raw(path, data, family=socket.AF_UNIX, source=None):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        if source:
            s.bind((source, 0))
        s.connect(path)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):  # the broker answers or closes; never hangs (timeout)
            pass
    except OSError:
        pass  # a reset is an answer too
    finally:
        s.close()


def main():
    ipc = sys.argv[1]
    tcp = sys.argv[2] if ":" in sys.argv[2] else None
    dirs = sys.argv[3:] if tcp else sys.argv[2:]
    files = []
    for d in dirs:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in sorted(names)]
    # The broker's protocol version, from its rendezvous file beside its socket.
    with open(os.path.join(os.path.dirname(ipc), "broker.json")) as f:
        protocol = json.load(f)["protocol"]
    ctx = zmq.Context()
    counts = {"raw": 0, "tcp": 0, "message": 0, "typed": 0}
    tool = ctx.socket(zmq.DEALER)
    tool.setsockopt(zmq.LINGER, 0)
    tool.connect("ipc://" + ipc)
    hello = {"v": protocol, "t": "session.hello", "id": 1,
             "body": {"role": "tool", "nspace": "", "rank": 0, "pid": os.getpid(), "secret": ""}}
    tool.send(msgpack.packb(hello))
    if not tool.poll(10000):
        sys.exit("the broker did not answer a tool's hello")
    tool.recv()
    for i, f in enumerate(files):
        data = open(f, "rb").read()
        raw(ipc, data)
        counts["raw"] += 1
        if tcp:
            host, port = tcp.rsplit(":", 1)
            # Most inputs fail the CURVE handshake, and the broker lets an address fail only a
            # few times a second: each comes from an address of its own on the loopback (all of
            # 127/8 is this machine), so that every one reaches the broker's parser.
            source = f"127.0.{1 + i // 250}.{1 + i % 250}" if host.startswith("127.") else None
            raw((host, int(port)), data, socket.AF_INET, source)
            counts["tcp"] += 1
        stranger = ctx.socket(zmq.DEALER)
        stranger.setsockopt(zmq.LINGER, 0)
        stranger.connect("ipc://" + ipc)
        stranger.send(data)
        stranger.poll(2000)  # an answer (a refusal) or nothing: either way, bounded
        stranger.close()
        counts["message"] += 1
        if b"\0" in data and "/messages" in f:
            name, body = data.split(b"\0", 1)
            env = msgpack.packb({"v": protocol, "t": name.decode("latin-1"), "id": 100 + i})
            # The envelope's body is the corpus's bytes as they are: a map of 4, body last.
            env = b"\x84" + env[1:] + msgpack.packb("body") + body
            tool.send(env)
            counts["typed"] += 1
    print(" ".join(f"{k}={v}" for k, v in counts.items()), flush=True)


if __name__ == "__main__":
    main()
