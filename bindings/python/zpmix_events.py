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

With replay (the broker's ROUTER, in a tool session of zpmix's protocol), nothing is missed that
the broker's replay ring still has, as with `zpmix events --since`: the events after number
`since` (an event's "bseq") of `epoch` come first, a stream's missing numbers are asked for when
a later one arrives, and a broker restart (a new epoch) gives the new epoch's events from its
first kept one, each after a gap marker {"gap": {"epoch", "after", "restarted", "lost",
"new_epoch"}}; the session is opened again after a restart.

    with EventSubscriber.for_run_dir("/run/user/1000/zpmix", since=0) as sub:
        for ev in sub:
            print(ev)
"""
import collections
import json
import os
import stat

import msgpack
import zmq

__all__ = ["EventSubscriber", "SCHEMA_VERSION", "PROTOCOL_VERSION", "decode_event", "events_uri",
           "rendezvous"]

# The published event schema this module reads: the envelope's "v" (docs/events.md).
SCHEMA_VERSION = 1
# The internal protocol of the broker's ROUTER that replay speaks (ZPMIX_PROTOCOL_VERSION): a
# broker of another release refuses the session.
PROTOCOL_VERSION = 2


def events_uri(run_dir):
    """The events URI a broker announces in <run_dir>/broker.json. The directory and the file
    must be this user's and writable by no one else (PermissionError otherwise), as zpmix
    itself requires: anyone can make a directory in /dev/shm or /tmp first."""
    return rendezvous(run_dir)["events_uri"]


def rendezvous(run_dir):
    """<run_dir>/broker.json as a dict (its "uri" and "events_uri"), checked as events_uri()."""
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
        return json.load(f)


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
    return _event(topic, env["body"])


def _event(topic, body):
    ev = dict(body)
    ev["topic"] = _text(topic)
    info = {}
    blob = ev.get("info") or b""
    if blob:
        for item in msgpack.unpackb(blob, raw=False, strict_map_key=False):
            key, _flags, value = item
            info[key] = value[1] if isinstance(value, list) and len(value) == 2 else value
    ev["info"] = info
    return ev


class _Session:
    """A tool session on a broker's ROUTER: a hello, then requests answered within a deadline."""

    def __init__(self, ctx, uri, timeout_ms):
        self._ctx, self._uri, self._timeout = ctx, uri, timeout_ms
        self._sock = None
        self._id = 0
        self.welcome = None

    def open(self):
        self.close()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.connect(self._uri)
        self.welcome = self.ask("session.hello", {"role": "tool", "pid": os.getpid()},
                                "session.welcome")

    def ask(self, t, body, reply):
        self._id += 1
        self._sock.send(msgpack.packb({"v": PROTOCOL_VERSION, "t": t, "id": self._id,
                                       "body": body}, use_bin_type=True))
        while True:
            if not self._sock.poll(self._timeout):
                raise TimeoutError(f"no answer from the broker at {self._uri} to {t}")
            env = msgpack.unpackb(self._sock.recv(), raw=False, strict_map_key=False)
            if env.get("id") != self._id:
                continue  # a late answer to an earlier request
            if env.get("t") == reply:
                return env.get("body") or {}
            b = env.get("body") or {}
            raise ConnectionError(f"{t}: {b.get('message', env.get('t'))} (status {b.get('status')})")

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class EventSubscriber:
    """A SUB socket on a broker's event publisher, yielding decoded events; with `broker` (the
    broker's ROUTER URI), also the replay ring's events this subscriber would otherwise miss, and
    gap markers for those the ring no longer has (see the module's text)."""

    def __init__(self, uri, topics=("ev/",), context=None, broker=None, since=None, epoch="",
                 timeout_ms=10000):
        self._ctx = context or zmq.Context.instance()
        self._topics = list(topics)
        self._sock = self._ctx.socket(zmq.SUB)
        self._sock.setsockopt(zmq.LINGER, 0)
        for t in topics:
            self._sock.setsockopt(zmq.SUBSCRIBE, t.encode())
        self._sock.connect(uri)
        self._uri = uri
        self._session = None
        self._epoch = ""
        self._last = 0        # the last number (bseq) delivered, or known seen, in _epoch
        self._seq = {}        # stream -> last seq delivered
        self._ready = collections.deque()  # replayed events and gap markers not yet returned
        if broker is not None:
            self._session = _Session(self._ctx, broker, timeout_ms)
            self._session.open()
            if since is not None:  # subscribed first, then the ring: duplicates are dropped
                self._catch_up(epoch, since)

    @classmethod
    def for_run_dir(cls, run_dir, topics=("ev/",), since=None, epoch="", context=None):
        """A replaying subscriber of the broker whose rendezvous file is in run_dir."""
        r = rendezvous(run_dir)
        return cls(r["events_uri"], topics, context, broker=r["uri"], since=since, epoch=epoch)

    def _ask_since(self, epoch, after):
        body = {"epoch": epoch, "after": after, "topics": self._topics}
        try:
            return self._session.ask("ev.since", body, "ev.since.reply")
        except (ConnectionError, TimeoutError):
            self._session.open()  # a restarted broker knows no session of ours
            events = self._session.welcome.get("events_uri")
            if events and events != self._uri:
                self._sock.disconnect(self._uri)
                self._sock.connect(events)
                self._uri = events
            return self._session.ask("ev.since", body, "ev.since.reply")

    def _catch_up(self, epoch, after):
        r = self._ask_since(epoch, after)
        if r.get("restarted") or r.get("lost", 0) > 0:
            self._ready.append({"gap": {"epoch": epoch or r["epoch"], "after": after,
                                        "restarted": bool(r.get("restarted")),
                                        "lost": r.get("lost", 0), "new_epoch": r["epoch"]}})
        self._epoch = r["epoch"]
        self._last = 0 if r.get("restarted") else max(self._last, after)
        for p in r.get("events") or []:
            ev = _event(p["topic"], p["event"])
            if ev.get("bseq", 0) > self._last:
                self._deliver(ev)
        self._last = max(self._last, r.get("head", 0))

    def _deliver(self, ev):
        if ev.get("epoch") == self._epoch:
            self._last = max(self._last, ev.get("bseq", 0))
        s = ev.get("stream")
        self._seq[s] = max(self._seq.get(s, 0), ev.get("seq", 0))
        self._ready.append(ev)

    def _live(self, ev):
        if self._session is None:
            self._ready.append(ev)
            return
        if self._epoch and ev.get("epoch") != self._epoch:
            self._catch_up(self._epoch, self._last)
        if not self._epoch:
            self._epoch = ev.get("epoch", "")
        bseq = ev.get("bseq", 0)
        if bseq and bseq <= self._last:
            return  # had it from the ring
        s = ev.get("stream")
        if s in self._seq and ev.get("seq", 0) > self._seq[s] + 1 and bseq > self._last + 1:
            self._catch_up(self._epoch, self._last)
            if bseq and bseq <= self._last:
                return
        self._deliver(ev)

    def recv(self, timeout_ms=None):
        """The next event (or gap marker), or None when none came within timeout_ms (None: wait
        forever)."""
        while not self._ready:
            if timeout_ms is not None and not self._sock.poll(timeout_ms):
                return None
            frames = self._sock.recv_multipart()
            if len(frames) != 2:
                continue
            try:
                ev = decode_event(frames[0], frames[1])
            except (ValueError, msgpack.exceptions.ExtraData, msgpack.exceptions.UnpackException):
                continue
            self._live(ev)
        return self._ready.popleft()

    def __iter__(self):
        while True:
            yield self.recv()

    def close(self):
        self._sock.close()
        if self._session is not None:
            self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
