#!/usr/bin/env python3
"""`zpmix exporter` as Prometheus scrapes it: a real `zpmix broker`, a job with fences through the
broker (wireup_prog's fences over subsets of four ranks skip the fence board), an injected
event; /metrics fetched over HTTP, parsed with Debian's python3-prometheus-client and, when
Debian's prometheus package is installed, checked with `promtool check metrics`.

usage: test_exporter.py ZPMIX WIREUP_PROG"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

zpmix, wireup = sys.argv[1], sys.argv[2]
DEADLINE = 20


def metrics(text):
    """{(name, frozenset(labels)): value} of every sample."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples, name, **labels):
    for (n, ls), v in samples.items():
        if n == name and all((k, str(w)) in ls for k, w in labels.items()):
            return v
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="zpmix-exporter-")
    uri = f"ipc://{tmp}/run/broker.sock"
    broker = subprocess.Popen([zpmix, "broker", "--run-dir", f"{tmp}/run", "-q"])
    exporter = subprocess.Popen([zpmix, "exporter", "--listen", "127.0.0.1:0", "--broker", uri],
                                stderr=subprocess.PIPE, text=True)
    try:
        line = exporter.stderr.readline()
        m = re.search(r"serving (http://\S+/metrics)", line)
        assert m, f"exporter did not start: {line!r}"
        url = m.group(1)

        # A job with fences through the broker, and an event.
        run = subprocess.run([zpmix, "run", "--broker", uri, "-n", "4", wireup, "fences"],
                             capture_output=True, text=True, timeout=DEADLINE)
        assert run.returncode == 0, run.stderr
        note = subprocess.run([zpmix, "notify", "--code", "-4321", "--range", "global",
                               "--broker", uri], capture_output=True, text=True,
                              timeout=DEADLINE)
        assert note.returncode == 0, note.stderr

        # The finished job is listed once its broker forgot its namespace: scrape until then.
        end = time.monotonic() + DEADLINE
        while True:
            with urllib.request.urlopen(url, timeout=DEADLINE) as r:
                assert r.status == 200
                assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                text = r.read().decode()
            s = metrics(text)
            if value(s, "zpmix_jobs", state="finished") == 1 or time.monotonic() > end:
                break
            time.sleep(0.1)

        failures = []

        def check(what, ok):
            print(("ok   " if ok else "FAIL ") + what)
            if not ok:
                failures.append(what)

        check("broker up", value(s, "zpmix_broker_up") == 1)
        check("one finished job, none running",
              value(s, "zpmix_jobs", state="finished") == 1
              and value(s, "zpmix_jobs", state="running") == 0)
        check("no rank running", value(s, "zpmix_ranks", state="running") == 0)
        ok_fences = value(s, "zpmix_fences_total", result="ok")
        check("the job's fences counted", ok_fences is not None and ok_fences >= 1)
        count = value(s, "zpmix_fence_duration_seconds_count")
        inf = value(s, "zpmix_fence_duration_seconds_bucket", le="+Inf")
        check("histogram: +Inf bucket == count == fences",
              count == inf == ok_fences + value(s, "zpmix_fences_total", result="failed"))
        check("histogram sum positive", value(s, "zpmix_fence_duration_seconds_sum") > 0)
        check("the injected event counted by code",
              value(s, "zpmix_events_published_total", code="-4321") == 1)
        check("job start and end counted by name",
              value(s, "zpmix_events_published_total", code_name="PMIX_EVENT_JOB_START") == 1
              and value(s, "zpmix_events_published_total", code_name="PMIX_EVENT_JOB_END") == 1)
        check("drops counted", value(s, "zpmix_events_dropped_total") == 0)
        mem = value(s, "zpmix_broker_resident_memory_bytes")
        check("broker memory", mem is not None and mem > 1 << 20)

        try:
            with urllib.request.urlopen(url.replace("/metrics", "/nothing"), timeout=DEADLINE):
                check("unknown path is 404", False)
        except urllib.error.HTTPError as e:
            check("unknown path is 404", e.code == 404)

        promtool = shutil.which("promtool")
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=DEADLINE)
            check("promtool check metrics: " + (p.stdout + p.stderr).strip(), p.returncode == 0)
        else:
            print("skip promtool check metrics: Debian's prometheus package is not installed")
        if failures:
            print(text)
            return 1
        return 0
    finally:
        for p in (exporter, broker):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
