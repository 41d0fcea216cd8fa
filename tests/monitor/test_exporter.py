#!/usr/bin/env python3
"""`zpmix exporter` as Prometheus scrapes it: a real `zpmix broker`, a job with fences through the
broker (wireup_prog's fences over subsets of four ranks skip the fence board) and on its fence
board (its whole-namespace ones), a failing job, an injected event; /metrics fetched over HTTP,
parsed with Debian's python3-prometheus-client and, when Debian's prometheus package is installed,
checked with `promtool check metrics`. Then the series of `zpmix run`'s own brokers, the same
from one run to the next, their counters carried over; and the shipped Grafana dashboard and
alert rules, whose queries may name only series and labels the exporter served here (and
`promtool check rules`, when installed).

usage: test_exporter.py ZPMIX WIREUP_PROG MONITORING_DIR"""
import json
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

zpmix, wireup, monitoring = sys.argv[1], sys.argv[2], sys.argv[3]
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


def start_exporter(args, env=None):
    exporter = subprocess.Popen([zpmix, "exporter", "--listen", "127.0.0.1:0"] + args,
                                stderr=subprocess.PIPE, text=True, env=env)
    line = exporter.stderr.readline()
    m = re.search(r"serving (http://\S+/metrics)", line)
    assert m, f"exporter did not start: {line!r}"
    return exporter, m.group(1)


def scrape(url):
    with urllib.request.urlopen(url, timeout=DEADLINE) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/plain"), r.headers["Content-Type"]
        return r.read().decode()


def scrape_until(url, pred):
    end = time.monotonic() + DEADLINE
    while True:
        s = metrics(scrape(url))
        if pred(s) or time.monotonic() > end:
            return s
        time.sleep(0.05)


def main():
    tmp = tempfile.mkdtemp(prefix="zpmix-exporter-")
    uri = f"ipc://{tmp}/run/broker.sock"
    broker = subprocess.Popen([zpmix, "broker", "--run-dir", f"{tmp}/run", "-q"])
    exporter, url = start_exporter(["--broker", uri])
    try:

        # A job with fences through the broker, and an event.
        run = subprocess.run([zpmix, "run", "--broker", uri, "-n", "4", wireup, "fences"],
                             capture_output=True, text=True, timeout=DEADLINE)
        assert run.returncode == 0, run.stderr
        failing = subprocess.run([zpmix, "run", "--broker", uri, "-n", "1", "false"],
                                 capture_output=True, text=True, timeout=DEADLINE)
        assert failing.returncode == 1, failing.stderr
        note = subprocess.run([zpmix, "notify", "--code", "-4321", "--range", "global",
                               "--broker", uri], capture_output=True, text=True,
                              timeout=DEADLINE)
        assert note.returncode == 0, note.stderr

        # The finished job is listed once its broker forgot its namespace: scrape until then.
        end = time.monotonic() + DEADLINE
        while True:
            text = scrape(url)
            s = metrics(text)
            if value(s, "zpmix_jobs", state="finished") == 2 or time.monotonic() > end:
                break
            time.sleep(0.1)

        failures = []

        def check(what, ok):
            print(("ok   " if ok else "FAIL ") + what)
            if not ok:
                failures.append(what)

        check("broker up", value(s, "zpmix_broker_up") == 1)
        check("two finished jobs, none running",
              value(s, "zpmix_jobs", state="finished") == 2
              and value(s, "zpmix_jobs", state="running") == 0)
        check("no rank running", value(s, "zpmix_ranks", state="running") == 0)
        check("the series are the broker's, by its URI", value(s, "zpmix_broker_up", broker=uri) == 1)
        check("jobs ended by outcome",
              value(s, "zpmix_jobs_ended_total", outcome="succeeded") == 1
              and value(s, "zpmix_jobs_ended_total", outcome="failed") == 1
              and value(s, "zpmix_jobs_ended_total", outcome="signalled") == 0)
        ok_fences = value(s, "zpmix_fences_total", result="ok", path="broker")
        check("the job's fences counted", ok_fences is not None and ok_fences >= 1)
        board = value(s, "zpmix_fences_total", result="ok", path="board")
        check("its fences on the node's fence board counted", board is not None and board >= 1)
        count = value(s, "zpmix_fence_duration_seconds_count")
        inf = value(s, "zpmix_fence_duration_seconds_bucket", le="+Inf")
        check("histogram: +Inf bucket == count == fences",
              count == inf == ok_fences
              + value(s, "zpmix_fences_total", result="failed", path="broker"))
        check("histogram sum positive", value(s, "zpmix_fence_duration_seconds_sum") > 0)
        check("the injected event counted by code",
              value(s, "zpmix_events_published_total", code="-4321") == 1)
        check("job start and end counted by name",
              value(s, "zpmix_events_published_total", code_name="PMIX_EVENT_JOB_START") == 2
              and value(s, "zpmix_events_published_total", code_name="PMIX_EVENT_JOB_END") == 2)
        check("drops counted", value(s, "zpmix_events_dropped_total") == 0)
        mem = value(s, "zpmix_broker_resident_memory_bytes")
        check("broker memory", mem is not None and mem > 1 << 20)

        served = set()  # (series name, label name) pairs, and (series name, None)
        for family in text_string_to_metric_families(text):
            for smp in family.samples:
                served.add((smp.name, None))
                served.update((smp.name, k) for k in smp.labels)
        run_series_stay(tmp, check)
        shipped_files_name_served_series(served, check)

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


def run_series_stay(tmp, check):
    """Brokers of `zpmix run` (no standing broker here): the same series from one run to the next,
    no pid in a label, and the counters of the run that ended carried over."""
    env = dict(os.environ, XDG_RUNTIME_DIR=f"{tmp}/xdg")
    os.makedirs(f"{tmp}/xdg/zpmix", mode=0o700)
    # Only this test's runtime directory: other brokers of this user may run meanwhile.
    exporter, url = start_exporter(["--runtime-dir", f"{tmp}/xdg/zpmix"], env)
    series, starts, pids = [], [], []
    try:
        for n in (1, 2):
            # `cat` runs until its stdin (zpmix run's) closes: scraped while it runs, once its
            # launch is complete (the n-th, the first run's carried over).
            run = subprocess.Popen([zpmix, "run", "-n", "1", "cat"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, env=env)
            pids.append(run.pid)
            s = scrape_until(url, lambda s: value(s, "zpmix_ranks", broker="run",
                                                  state="running") == 1
                             and value(s, "zpmix_events_published_total", broker="run",
                                       code_name="PMIX_LAUNCH_COMPLETE") == n)
            series.append({(n, ls - {("broker", "run")}) for (n, ls) in s
                           if ("broker", "run") in ls})
            starts.append(value(s, "zpmix_events_published_total", broker="run",
                                code_name="PMIX_EVENT_JOB_START"))
            check("a run's broker answers under broker=\"run\"",
                  value(s, "zpmix_broker_up", broker="run") == 1)
            run.stdin.close()
            run.wait(DEADLINE)
    finally:
        exporter.terminate()
        exporter.wait(10)
    check(f"the same series for both runs (differing: {sorted(series[0] ^ series[1])})",
          series[0] == series[1] and len(series[0]) > 10)
    check("no pid in a label", not any(str(p) in v for _, ls in series[0] | series[1]
                                       for _, v in ls for p in pids))
    check(f"the first run's counters carried over (job starts {starts})", starts == [1, 2])


def shipped_files_name_served_series(served, check):
    """The Grafana dashboard and the alert rules: every series a query names is one the exporter
    served above, with labels it has; the rules pass `promtool check rules` when it is there."""
    import yaml  # Debian's python3-yaml

    names = {n for n, _ in served}
    builtin = {"le", "instance", "job"}  # le: histogram buckets; the others Prometheus adds

    def check_expr(where, expr):
        for name in set(re.findall(r"\b(zpmix_[a-z_]+)\b", expr)):
            check(f"{where}: series {name} is served", name in names)
            labels_of_name = {k for n, k in served if n == name and k}
            for sel in re.findall(name + r"\{([^}]*)\}", expr):
                for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", sel):
                    check(f"{where}: {name} has label {label}",
                          label in labels_of_name or label in builtin)
        for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
            for label in filter(None, (x.strip() for x in group.split(","))):
                check(f"{where}: some series has label {label}",
                      label in builtin or any(k == label for _, k in served))
        check(f"{where}: names some zpmix series", "zpmix_" in expr)

    with open(os.path.join(monitoring, "zpmix-dashboard.json")) as f:
        dash = json.load(f)
    targets = [(p["title"], t["expr"]) for p in dash["panels"] for t in p.get("targets", [])]
    check("the dashboard has panels with queries", len(targets) >= 8)
    for title, expr in targets:
        check_expr(f"dashboard panel {title!r}", expr)
    with open(os.path.join(monitoring, "zpmix-alerts.yml")) as f:
        rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
    check("the alert rules load", len(rules) >= 5
          and all({"alert", "expr", "annotations"} <= r.keys() for r in rules))
    for r in rules:
        check_expr(f"alert {r['alert']}", r["expr"])
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "rules", os.path.join(monitoring, "zpmix-alerts.yml")],
                           capture_output=True, text=True, timeout=DEADLINE)
        check("promtool check rules: " + (p.stdout + p.stderr).strip(), p.returncode == 0)
    else:
        print("skip promtool check rules: Debian's prometheus package is not installed")


if __name__ == "__main__":
    sys.exit(main())
