#!/usr/bin/python3
"""Checks the README's event schema (the "Events" section) against an event the broker sends.

    readme_schema.py README RUN_DIR ZPMIX

Reads the envelope's keys from the README's `{"v": 1, ...}` and the body's fields from the
backticked names after "body:", subscribes to the broker of RUN_DIR with plain ZeroMQ, injects a
global environment event with `ZPMIX notify` until one arrives (30 s at most), and compares: the
topic as the README builds it, the envelope's keys, "v" and "t", and the body's fields, both
ways. Prints what differs; exits 1 if anything does."""
import json
import os
import re
import subprocess
import sys
import time

import msgpack
import zmq


def readme_schema(text):
    section = text.split("\n## Events", 1)[1].split("\n## ", 1)[0]
    bullet = section.split("- Envelope:", 1)[1].split("\n- ", 1)[0].split("\n\n", 1)[0]
    env = re.search(r"`\{(.*?)\}`", bullet).group(1)
    env_keys = {k.split(":")[0].strip().strip('"') for k in env.split(",")}
    body_part = bullet.split("body:", 1)[1]
    fields = set()
    for tok in re.findall(r"`([^`]*)`", body_part):
        m = re.match(r"^([a-z_]+)(\s*\{.*\})?$", tok)
        if m:
            fields.add(m.group(1))
    return env_keys, fields


def main():
    readme, run_dir, zpmix = sys.argv[1:4]
    env_keys, fields = readme_schema(open(readme).read())
    uri = json.load(open(os.path.join(run_dir, "broker.json")))["events_uri"]
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"ev/g/")
    sub.connect(uri)
    deadline = time.monotonic() + 30
    frames = None
    while frames is None and time.monotonic() < deadline:
        subprocess.run([zpmix, "notify", "--code", "-1000", "--range", "global", "--info",
                        "reason=schema-check"], check=True, capture_output=True)
        if sub.poll(1000):
            frames = sub.recv_multipart()
    if frames is None:
        print("no event within 30 s")
        return 1
    problems = []
    topic, envelope = frames[0].decode(), msgpack.unpackb(frames[1], raw=False)
    if topic != "ev/g/e/-1000/":
        problems.append(f"topic {topic!r}, the README's form gives 'ev/g/e/-1000/'")
    if set(envelope) != env_keys:
        problems.append(f"envelope keys {sorted(envelope)}, README {sorted(env_keys)}")
    if envelope.get("v") != 1 or envelope.get("t") != "event":
        problems.append(f"v {envelope.get('v')!r}, t {envelope.get('t')!r}")
    body = envelope.get("body", {})
    if set(body) != fields:
        problems.append(f"body fields sent but not in the README: {sorted(set(body) - fields)}; "
                        f"in the README but not sent: {sorted(fields - set(body))}")
    if body.get("status") != -1000:
        problems.append(f"status {body.get('status')!r}")
    if not isinstance(body.get("source"), dict) or set(body["source"]) != {"nspace", "rank"}:
        problems.append(f"source {body.get('source')!r}")
    for p in problems:
        print("README event schema:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
