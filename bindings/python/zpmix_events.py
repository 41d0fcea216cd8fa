"""Subscribe to a zpmix broker's events with plain ZeroMQ and msgpack.

Every event the broker publishes on its XPUB socket is two frames: a topic and an envelope.
Topics are  ev/<range prefix><class>/<code>/  (docs/events.md), so subscribing to a prefix
selects events by range, class and code:

    ev/                     everything
    ev/g/                   GLOBAL range          ev/s/<session>/     SESSION range
    ev/n/<nspace>/          NAMESPACE range       ev/node/<host>/     LOCAL (node) range
    ev/p/<nspace>/<rank>/   one process           ev/rm/              RM range (monitors only)

The envelope is a msgpack map {"v": 1, "t": "event", "id", "from", "body"}, where "v" is the
event schema version (SCHEMA_VERSION, stable across zpmix releases); the body a map with
stream, seq, status, source {nspace, rank}, range, custom_range, affected, non_default, enviro,
text, timestamp, info: msgpack bytes of [[key, flags, [type, payload]], ...], and retained (the
broker keeps it until its local recipients acknowledge it).

    from zpmix_events import EventSubscriber
    with EventSubscriber(events_uri("/run/user/1000/zpmix")) as sub:
        for ev in sub:
            print(ev["status"], ev["source"], ev["info"])
"""
import json
import os
import stat

import msgpack
import zmq

__all__ = ["EventSubscriber", "SCHEMA_VERSION", "decode_event", "events_uri"]

# The published event schema this module reads: the envelope's "v" (docs/events.md).
SCHEMA_VERSION = 1


def events_uri(run_dir):
    """The events URI a broker announces in <run_dir>/broker.json. The directory and the file
    must be this user's and writable by no one else (PermissionError otherwise), as zpmix
    itself requires: anyone can make a directory in /dev/shm or /tmp first."""
    st = os.lstat(run_dir)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise PermissionError(f"refusing {run_dir}: not a directory of this user that only it "
                              f"can write (owner {st.st_uid}, mode {st.st_mode & 0o7777:04o})")
    fd = os.open(os.path.join(run_dir, "broker.json"), os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise PermissionError(f"refusing {run_dir}/broker.json: not a file of this user "
                                  f"that only it can write")
        return json.load(f)["events_uri"]


def _text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def decode_event(topic, envelope):
    """One event (a dict) from its two frames; raises ValueError when they are not an event of
    this module's schema."""
    env = msgpack.unpackb(envelope, raw=False, strict_map_key=False)
    if not isinstance(env, dict) or env.get("t") != "event" or not isinstance(env.get("body"), dict):
        raise ValueError("not a zpmix event")
    if env.get("v") != SCHEMA_VERSION:
        raise ValueError("event schema version %r, this module reads %d" % (env.get("v"), SCHEMA_VERSION))
    ev = dict(env["body"])
    ev["topic"] = _text(topic)
    info = {}
    blob = ev.get("info") or b""
    if blob:
        for item in msgpack.unpackb(blob, raw=False, strict_map_key=False):
            key, _flags, value = item
            info[key] = value[1] if isinstance(value, list) and len(value) == 2 else value
    ev["info"] = info
    return ev


class EventSubscriber:
    """A SUB socket on a broker's event publisher, yielding decoded events."""

    def __init__(self, uri, topics=("ev/",), context=None):
        self._ctx = context or zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.SUB)
        self._sock.setsockopt(zmq.LINGER, 0)
        for t in topics:
            self._sock.setsockopt(zmq.SUBSCRIBE, t.encode())
        self._sock.connect(uri)

    def recv(self, timeout_ms=None):
        """The next event, or None when none came within timeout_ms (None: wait forever)."""
        while True:
            if timeout_ms is not None and not self._sock.poll(timeout_ms):
                return None
            frames = self._sock.recv_multipart()
            if len(frames) != 2:
                continue
            try:
                return decode_event(frames[0], frames[1])
            except (ValueError, msgpack.exceptions.ExtraData, msgpack.exceptions.UnpackException):
                continue

    def __iter__(self):
        while True:
            yield self.recv()

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
