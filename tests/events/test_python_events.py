"""bindings/python/zpmix_events.py against a real `zpmix broker`: an event injected over the
broker's ROUTER (as `zpmix notify` does) arrives decoded, its envelope of the documented schema
version, and a subscriber to another range does not get it. Usage: test_python_events.py <zpmix binary> <bindings/python dir>"""
import os
import subprocess
import sys
import tempfile
import time

import msgpack
import zmq

sys.path.insert(0, sys.argv[2])
from zpmix_events import (PROTOCOL_VERSION, SCHEMA_VERSION, EventSubscriber,  # noqa: E402
                          events_uri)


# "v" here is the internal protocol's version (ZPMIX_PROTOCOL_VERSION, the third argument), which
# a tool speaks.
PROTOCOL = int(sys.argv[3])


def envelope(t, rid, body):
    return msgpack.packb({"v": PROTOCOL, "t": t, "id": rid, "body": body}, use_bin_type=True)


def main():
    run_dir = tempfile.mkdtemp(prefix="zpmix-py-")
    broker = subprocess.Popen([sys.argv[1], "broker", "--run-dir", run_dir, "-q"])
    try:
        # The broker's socket appears once it listens: ZeroMQ keeps retrying the connection and
        # the queued hello is answered then, within a deadline. The rendezvous file is written
        # before the broker serves, so it exists once the welcome came.
        ctx = zmq.Context.instance()
        dealer = ctx.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.connect("ipc://" + os.path.join(run_dir, "broker.sock"))
        dealer.send(envelope("session.hello", 1, {"role": "tool", "pid": os.getpid()}))
        assert dealer.poll(10000), "the broker did not start"
        welcome = msgpack.unpackb(dealer.recv(), raw=False)
        assert welcome["t"] == "session.welcome", welcome
        uri = events_uri(run_dir)
        everything = EventSubscriber(uri, ["ev/"])
        other = EventSubscriber(uri, ["ev/n/other/"])
        raw = ctx.socket(zmq.SUB)
        raw.setsockopt(zmq.LINGER, 0)
        raw.setsockopt(zmq.SUBSCRIBE, b"ev/g/")
        raw.connect(uri)
        # A slow joiner may miss the first events: repeat until one arrives, within a deadline.
        info = msgpack.packb([["site.reason", 0, [3, "maintenance"]]], use_bin_type=True)
        got = None
        deadline = time.monotonic() + 10
        rid = 2
        while got is None and time.monotonic() < deadline:
            dealer.send(envelope("ev.notify", rid, {"event": {
                "status": -4242, "range": 5, "enviro": True, "text": "hello",
                "source": {"nspace": "py", "rank": 0}, "info": info}}))
            rid += 1
            assert dealer.poll(5000), "no answer to ev.notify"
            dealer.recv()
            got = everything.recv(200)
        assert got is not None, "no event received"
        assert got["status"] == -4242, got
        assert got["topic"] == "ev/g/e/-4242/", got["topic"]
        assert got["stream"] == "ev/g/e/", got
        assert got["seq"] >= 1
        assert got["text"] == "hello"
        assert got["info"] == {"site.reason": "maintenance"}, got["info"]
        assert other.recv(200) is None, "a namespace subscriber got a global event"
        # The schema version docs/events.md documents, on every published envelope.
        assert SCHEMA_VERSION == 1
        published = None
        deadline = time.monotonic() + 10
        while published is None and time.monotonic() < deadline:  # a slow joiner too
            dealer.send(envelope("ev.notify", rid, {"event": {
                "status": -4243, "range": 5, "source": {"nspace": "py", "rank": 0}}}))
            rid += 1
            assert dealer.poll(5000), "no answer to ev.notify"
            dealer.recv()
            if raw.poll(200):
                published = msgpack.unpackb(raw.recv_multipart()[1], raw=False,
                                            strict_map_key=False)
        assert published is not None, "the raw subscriber got no event"
        assert published["t"] == "event" and published["v"] == 1, published
        dealer.close()
        broker = replay_across_a_restart(run_dir, broker)
        print("ok")
    finally:
        broker.terminate()
        broker.wait(10)


def notify(run_dir, code):
    """Publishes a GLOBAL event `code` through a session of its own, as `zpmix notify` does."""
    dealer = zmq.Context.instance().socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect("ipc://" + os.path.join(run_dir, "broker.sock"))
    try:
        dealer.send(envelope("session.hello", 1, {"role": "tool", "pid": os.getpid()}))
        assert dealer.poll(10000), "no welcome"
        dealer.recv()
        dealer.send(envelope("ev.notify", 2, {"event": {
            "status": code, "range": 5, "source": {"nspace": "py", "rank": 0}}}))
        assert dealer.poll(5000), "no answer to ev.notify"
        dealer.recv()
    finally:
        dealer.close()


def replay_across_a_restart(run_dir, broker):
    """A replaying subscriber: what came before it (since=0) first, then live events; after the
    broker restarts, a gap marker and the new broker's events from its first, each once."""
    assert PROTOCOL_VERSION == PROTOCOL, "zpmix_events.PROTOCOL_VERSION is not the broker's"
    for code in (-4250, -4251):
        notify(run_dir, code)
    sub = EventSubscriber.for_run_dir(run_dir, ["ev/g/j/-425"], since=0)
    got = [sub.recv(5000), sub.recv(5000)]
    assert [e["status"] for e in got] == [-4250, -4251], got
    assert [e["bseq"] for e in got] == sorted(e["bseq"] for e in got)
    old_epoch = got[0]["epoch"]
    broker.terminate()
    broker.wait(10)
    broker = subprocess.Popen([sys.argv[1], "broker", "--run-dir", run_dir, "-q"])
    # The SUB socket comes back on its own; until it has, the events reach only the ring.
    after = []
    code = -4252
    deadline = time.monotonic() + 10
    while len(after) < 3 and time.monotonic() < deadline:
        notify(run_dir, code)
        code -= 1
        while True:
            e = sub.recv(200)
            if e is None:
                break
            after.append(e)
    sub.close()
    assert len(after) >= 3, after
    gap = after[0].get("gap")
    assert gap and gap["restarted"] and gap["epoch"] == old_epoch, after[0]
    events = after[1:]
    assert [e["status"] for e in events] == [-4252 - i for i in range(len(events))], events
    assert [e["bseq"] for e in events] == [i + 1 for i in range(len(events))], events
    assert all(e["epoch"] == gap["new_epoch"] != old_epoch for e in events), events
    return broker


if __name__ == "__main__":
    main()
