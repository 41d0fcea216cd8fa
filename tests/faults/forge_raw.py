#!/usr/bin/python3
"""A rank that speaks the broker's protocol itself (test_faults.sh, "forged events"), to forge
what libpmix would not send: launched by `zpmix run`, its own process asks for a tool session
(which acts for the runtime), then, as the client it is, notifies PMIX_ERR_PROC_ABORTED to every
job (GLOBAL), with job NS's rank 0 as the source, and to CUSTOM {NS:*}. Prints "<what> <status>"
for each (0: accepted; the broker's ErrorReply status otherwise).
usage (as a rank): forge_raw.py NS PROTOCOL"""
import os
import sys

import msgpack
import zmq

PMIX_ERR_PROC_ABORTED = -7
RANGE_GLOBAL, RANGE_CUSTOM = 5, 6
WILDCARD = 0xFFFFFFFE


def main():
    victim, protocol = sys.argv[1], int(sys.argv[2])
    me = {"nspace": os.environ["PMIX_NAMESPACE"], "rank": int(os.environ["PMIX_RANK"])}
    ctx = zmq.Context()

    def ask(sock, t, rid, body):
        sock.send(msgpack.packb({"v": protocol, "t": t, "id": rid, "body": body}))
        if not sock.poll(10000):
            return "timeout"
        reply = msgpack.unpackb(sock.recv(), raw=False)
        if reply["t"] == "reply.error":
            return reply["body"]["status"]
        return 0

    def dealer():
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(os.environ["ZPMIX_URI"])
        return s

    tool = dealer()
    print("tool-session", ask(tool, "session.hello", 1,
                              {"role": "tool", "nspace": "", "rank": 0, "pid": os.getpid()}),
          flush=True)
    client = dealer()
    print("client-session", ask(client, "session.hello", 1,
                                {"role": "client", "nspace": me["nspace"], "rank": me["rank"],
                                 "pid": os.getpid()}), flush=True)

    def notify(rid, source, rng, members=()):
        event = {"status": PMIX_ERR_PROC_ABORTED, "source": source, "range": rng,
                 "custom_range": list(members), "affected": [{"nspace": victim, "rank": 0}],
                 "text": "forged"}
        return ask(client, "ev.notify", rid, {"event": event, "do_not_cache": False})

    b0 = {"nspace": victim, "rank": 0}
    print("raw-global", notify(2, me, RANGE_GLOBAL), flush=True)
    print("raw-forged-source", notify(3, b0, RANGE_CUSTOM, [{"nspace": victim, "rank": WILDCARD}]),
          flush=True)
    print("raw-custom", notify(4, me, RANGE_CUSTOM, [{"nspace": victim, "rank": WILDCARD}]),
          flush=True)


if __name__ == "__main__":
    main()
