"""A real Patroni failover with lockd under load (`make ha-demo`, run through scripts/ha-demo).

One etcd, two Patroni nodes (a primary and its synchronous standby, synchronous_mode_strict;
three with HA_DEMO_NODES=3), two lockd instances given every host with
target_session_attrs=read-write. Leases are held, clients acquire and release their own
resources, then the leader's Patroni and its postmaster are killed (kill -9). Patroni promotes
the standby once the leader key expires; the killed node is started again (as a supervisor
would) and rejoins as a standby. With two nodes the strict mode blocks every commit until then;
with three, the third node becomes the synchronous standby. Prints the figures; exits non-zero
if a lease was lost, a fencing token repeated, or an answer was a 500 or missing.
HA_DEMO_KEEP=1 keeps the temporary directory (the logs).
"""
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
LOCKD = os.environ.get("LOCKD", "target/debug/lockd")
PATRONI = os.path.join(os.path.dirname(sys.executable), "patroni")
# Patroni 4 raises a ttl below 20 s to 20 s and keeps loop_wait + 2 * retry_timeout <= ttl.
DCS = {"ttl": 20, "loop_wait": 1, "retry_timeout": 5, "synchronous_mode": True,
       "synchronous_mode_strict": True, "synchronous_node_count": 1,
       "maximum_lag_on_failover": 1048576,
       "postgresql": {"use_pg_rewind": True, "remove_data_directory_on_rewind_failure": True,
                      "remove_data_directory_on_diverged_timelines": True,
                      "parameters": {"wal_log_hints": "on", "max_wal_senders": 10,
                                     "max_replication_slots": 10, "wal_keep_size": "128MB"}}}
NODES = int(os.environ.get("HA_DEMO_NODES", "2"))  # 3: a second standby takes over the sync role
CLIENTS = 6
HELD = 4
LOAD_BEFORE, LOAD_AFTER = 5.0, 5.0
DB = "lockd_demo"

t0 = time.monotonic()
procs = []  # (name, Popen) of everything started, killed by process group on exit
tmp = tempfile.mkdtemp(prefix="lockd-ha-demo-")


def now():
    return time.monotonic() - t0


def say(msg):
    print(f"[{now():7.2f} s] {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name, argv, user=None, env=None):
    log = open(os.path.join(tmp, f"{name}.log"), "ab")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, user=user,
                         group=user, extra_groups=[] if user else None, env=env,
                         start_new_session=True)
    procs.append((name, p))
    return p


def request(port, method, path, body=None, timeout=15):
    """(status, Retry-After, parsed JSON or None); raises OSError when there is no answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data,
                     headers={"content-type": "application/json"} if data else {})
        r = conn.getresponse()
        raw = r.read()
        parsed = json.loads(raw) if raw[:1] in (b"{", b"[") else None
        return r.status, r.getheader("Retry-After"), parsed
    finally:
        conn.close()


def wait_for(what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (OSError, ValueError, psycopg2.Error):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


class Node:
    def __init__(self, name, etcd_port, user):
        self.name, self.user = name, user
        self.pg_port, self.api_port = free_port(), free_port()
        self.dir = os.path.join(tmp, name)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.dir, mode=0o700)
        if user:
            shutil.chown(self.dir, user, user)
        self.config = os.path.join(self.dir, "patroni.yml")
        conf = {"scope": "lockd-demo", "name": name,
                "restapi": {"listen": f"127.0.0.1:{self.api_port}",
                            "connect_address": f"127.0.0.1:{self.api_port}"},
                "etcd3": {"host": f"127.0.0.1:{etcd_port}"},
                "bootstrap": {"dcs": DCS, "initdb": [{"encoding": "UTF8"}],
                              "pg_hba": ["local all all trust",
                                         "host replication replicator 127.0.0.1/32 trust",
                                         "host all all 127.0.0.1/32 trust"]},
                "postgresql": {"listen": f"127.0.0.1:{self.pg_port}",
                               "connect_address": f"127.0.0.1:{self.pg_port}",
                               "data_dir": self.data, "bin_dir": PG_BIN,
                               "pgpass": os.path.join(self.dir, "pgpass"),
                               "authentication": {
                                   "superuser": {"username": "postgres", "password": "demo"},
                                   "replication": {"username": "replicator", "password": "demo"}},
                               "parameters": {"unix_socket_directories": self.dir}}}
        with open(self.config, "w") as f:
            json.dump(conf, f)  # JSON is YAML
        self.proc = None

    def start(self):
        env = {"PATH": f"{PG_BIN}:/usr/bin:/bin", "HOME": self.dir, "LC_ALL": "C.UTF-8"}
        self.proc = start(f"patroni-{self.name}", [PATRONI, self.config], self.user, env)

    def api(self, path="/"):
        return request(self.api_port, "GET", path, timeout=2)

    def in_recovery(self):
        return self.sql("SELECT pg_is_in_recovery()")[0]

    def sql(self, statement):
        """Runs one statement outside a transaction; its first row."""
        c = psycopg2.connect(host="127.0.0.1", port=self.pg_port, user="postgres",
                             dbname="postgres", connect_timeout=1)
        try:
            c.autocommit = True
            with c.cursor() as cur:
                cur.execute(statement)
                return cur.fetchone() if cur.description else None
        finally:
            c.close()

    def postmaster(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())


def cluster_roles(node):
    status, _, body = node.api("/cluster")
    return {m["name"]: (m["role"], m.get("state")) for m in body["members"]} if status == 200 else {}


def start_lockd(name, url):
    p = start(name, [LOCKD, "serve", "--bind", "127.0.0.1:0", "--database-url", url])
    log = os.path.join(tmp, f"{name}.log")

    def listening():
        if p.poll() is not None:
            raise RuntimeError(f"{name} exited: " + open(log).read()[-2000:])
        for line in open(log):
            if line.startswith("listening on http://"):
                return int(line.strip().rsplit(":", 1)[1])
    return wait_for(f"{name} to listen", listening, 60)


answers = []  # (client, op, resource, sent, answered, status, retry_after, token)
stop = threading.Event()


def ask(client, op, resource, port, method, body):
    sent = now()
    try:
        status, retry_after, parsed = request(port, method, f"/locks/{resource}", body)
    except OSError:
        status, retry_after, parsed = None, None, None
    token = None
    if status == 200 and method == "POST" and parsed.get("acquired"):
        token = parsed["lock"]["fencing_token"]
    answers.append((client, op, resource, sent, now(), status, retry_after, token))
    return status, parsed


def load_client(c, ports):
    owner, i = f"client-{c}", 0
    while not stop.is_set():
        resource, port = f"load-{c}-{i % 4}", ports[i % 2]
        i += 1
        status, body = ask(c, "acquire", resource, port, "POST", {"owner": owner, "ttl_seconds": 30})
        if status == 200 and body.get("acquired"):
            while not stop.is_set():  # a release answered 503 may or may not have happened
                status, _ = ask(c, "release", resource, port, "DELETE", {"owner": owner})
                if status != 503:
                    break
                time.sleep(0.1)
        elif status == 503:
            time.sleep(0.1)  # Retry-After says 1 s; a short pause measures the gap closer


def cleanup():
    for name, p in reversed(procs):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    for entry in os.listdir(tmp):  # postmasters run in sessions of their own
        pid_file = os.path.join(tmp, entry, "data", "postmaster.pid")
        try:
            with open(pid_file) as f:
                os.killpg(os.getpgid(int(f.readline())), signal.SIGKILL)
        except (OSError, ValueError):
            pass
    if os.environ.get("HA_DEMO_KEEP"):
        print(f"ha-demo: kept {tmp} (its logs)")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def main():
    user = "postgres" if os.geteuid() == 0 else None
    if user:
        pwd.getpwnam(user)
        shutil.chown(tmp, user, user)
    os.chmod(tmp, 0o755)
    etcd_port, peer_port = free_port(), free_port()
    start("etcd", ["etcd", "--name", "demo", "--data-dir", os.path.join(tmp, "etcd"),
                   "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                   "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                   "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                   "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                   "--initial-cluster", f"demo=http://127.0.0.1:{peer_port}"])
    wait_for("etcd", lambda: request(etcd_port, "GET", "/health")[0] == 200, 30)
    nodes = [Node(f"node{i}", etcd_port, user) for i in range(1, NODES + 1)]
    say(f"etcd {etcd_port}; Patroni " + ", ".join(
        f"{n.name} (PostgreSQL {n.pg_port}, REST {n.api_port})" for n in nodes))
    say(f"Patroni settings: {json.dumps({k: v for k, v in DCS.items() if k != 'postgresql'})}")
    nodes[0].start()
    wait_for("node1 to bootstrap as the leader", lambda: nodes[0].api()[0] == 200, 120)
    for node in nodes[1:]:
        node.start()
    ready = sorted([("leader", "running"), ("sync_standby", "streaming")]
                   + [("replica", "streaming")] * (NODES - 2))
    wait_for("a synchronous standby and every replica streaming",
             lambda: sorted(cluster_roles(nodes[0]).values()) == ready, 180)
    roles = cluster_roles(nodes[0])
    leader = next(n for n in nodes if roles[n.name][0] == "leader")
    replica = next(n for n in nodes if roles[n.name][0] == "sync_standby")  # the one Patroni promotes
    say(f"{leader.name} leads, {replica.name} is its synchronous standby")
    leader.sql(f"CREATE DATABASE {DB}")
    hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in nodes)
    url = f"postgres://postgres@{hosts}/{DB}?target_session_attrs=read-write"
    ports = [start_lockd("lockd-a", url), start_lockd("lockd-b", url)]
    say(f"lockd on ports {ports[0]} and {ports[1]}")

    held = {}
    for h in range(HELD):
        status, body = ask("held", "acquire", f"held-{h}", ports[0], "POST",
                           {"owner": f"holder-{h}", "ttl_seconds": 600})
        assert status == 200 and body["acquired"], (status, body)
        held[f"held-{h}"] = (f"holder-{h}", body["lock"]["fencing_token"])
    threads = [threading.Thread(target=load_client, args=(c, ports), daemon=True)
               for c in range(CLIENTS)]
    for t in threads:
        t.start()
    say(f"holding {HELD} leases; {CLIENTS} clients acquire and release")
    time.sleep(LOAD_BEFORE)

    postmaster = leader.postmaster()
    os.killpg(leader.proc.pid, signal.SIGKILL)
    os.killpg(os.getpgid(postmaster), signal.SIGKILL)
    t_kill = now()
    leader.proc.wait()
    say(f"killed {leader.name}: Patroni (pid {leader.proc.pid}) and its postmaster "
        f"(pid {postmaster}), kill -9")
    wait_for("the replica's promotion", lambda: replica.in_recovery() is False, 120)
    t_promoted = now()
    say(f"{replica.name} promoted (pg_is_in_recovery() false)")
    wait_for("Patroni to report the new primary",
             lambda: replica.api()[2]["role"] == "primary", 30)
    t_patroni = now()
    leader.start()  # as a supervisor would; strict mode blocks commits until a standby is back
    say(f"{leader.name}'s Patroni started again")
    sync = wait_for("a synchronous standby of the new primary", lambda: replica.sql(
        "SELECT application_name FROM pg_stat_replication"
        " WHERE state = 'streaming' AND sync_state = 'sync'"), 180)
    t_streaming = now()
    say(f"{sync[0]} streams to {replica.name} as its synchronous standby (pg_stat_replication)")
    wait_for("Patroni to name a synchronous standby", lambda: ("sync_standby", "streaming")
             in cluster_roles(replica).values(), 180)
    t_rejoined = now()
    say("Patroni lists a sync_standby again")
    wait_for("a grant after the promotion",
             lambda: any(a[7] is not None and a[3] > t_promoted for a in answers), 60)
    time.sleep(LOAD_AFTER)
    stop.set()
    for t in threads:
        t.join()

    after = {}
    for name, (owner, token) in held.items():
        views = [request(p, "GET", f"/locks/{name}") for p in ports]
        after[name] = all(s == 200 and b["owner"] == owner and b["fencing_token"] == token
                          for s, _, b in views)
    return report(t_kill, t_promoted, t_patroni, t_streaming, t_rejoined, held, after)


def report(t_kill, t_promoted, t_patroni, t_streaming, t_rejoined, held, after):
    ms = lambda t: f"{round((t - t_kill) * 1000):,} ms"  # noqa: E731
    by_status = {}
    for a in answers:
        label = ("no answer" if a[5] is None else "200 granted" if a[7] is not None
                 else "200 not granted" if a[1] == "acquire" and a[5] == 200 else str(a[5]))
        by_status[label] = by_status.get(label, 0) + 1
    failing = [a for a in answers if a[5] not in (200, 204, 404)]
    first_fail = min((a[4] for a in failing), default=None)
    grants = [a for a in answers if a[7] is not None]
    first_after = min((a for a in grants if a[3] > t_promoted), key=lambda a: a[4])
    # A grant committed before the kill may be answered just after it: count grants asked later.
    grant_again = min((a[4] for a in grants if first_fail is not None and a[3] > first_fail),
                      default=None)
    before = [a for a in grants if a[4] < t_kill]
    resource_of, repeated = {}, 0
    for a in grants:
        if resource_of.setdefault(a[7], a[2]) != a[2]:
            repeated += 1
    no_retry_after = sum(1 for a in answers if a[5] == 503 and not a[6])
    slowest = max(answers, key=lambda a: a[4] - a[3])
    lost = sum(1 for ok in after.values() if not ok)

    print("\n== figures")
    print(f"kill -> {'promotion (pg_is_in_recovery() false)':44} {ms(t_promoted)}")
    print(f"kill -> {'Patroni reports role primary':44} {ms(t_patroni)}")
    print(f"kill -> {'a standby streams as synchronous':44} {ms(t_streaming)}")
    print(f"kill -> {'Patroni lists a sync_standby':44} {ms(t_rejoined)}")
    print(f"kill -> {'first grant asked after the promotion':44} {ms(first_after[4])} "
          f"(asked at {ms(first_after[3])}, token {first_after[7]:,})")
    if first_fail is not None:
        print(f"unavailability: first failing answer at {ms(first_fail)}, first grant again at "
              f"{ms(grant_again)}: {(grant_again - first_fail) * 1000:,.0f} ms")
    print(f"answers: {len(answers):,}; " + ", ".join(f"{s}: {n:,}" for s, n in sorted(by_status.items())))
    print(f"  503 without Retry-After: {no_retry_after}; slowest answer: "
          f"{(slowest[4] - slowest[3]) * 1000:,.0f} ms ({slowest[1]} asked at {ms(slowest[3])}, "
          f"status {slowest[5]})")
    print(f"leases held before the kill: {len(held)}; still held after (same owner and token, "
          f"both instances): {len(held) - lost}; lost: {lost}")
    print(f"fencing tokens: {len(grants):,} grants, {repeated} tokens given to two resources; "
          f"last before the kill {max(a[7] for a in before):,}, first after {first_after[7]:,}")
    for name in ("lockd-a", "lockd-b"):  # its WARN and ERROR lines, by message (digits as #)
        kinds, timeline = {}, 0
        for line in open(os.path.join(tmp, f"{name}.log")):
            timeline += "first lockd connection on a new PostgreSQL timeline" in line
            level = next((lv for lv in (" ERROR ", " WARN ") if lv in line), None)
            if level:
                kind = level.strip() + " " + re.sub(r"\d+", "#", line.split(level, 1)[1].strip())[:160]
                kinds[kind] = kinds.get(kind, 0) + 1
        print(f"{name}: logged the new timeline {timeline} times; {sum(kinds.values())} WARN/ERROR lines" + "".join(
            f"\n  {n:4} x {kind}" for kind, n in sorted(kinds.items(), key=lambda k: -k[1])[:6]))
    bad = {s: n for s, n in by_status.items() if s == "no answer" or s.startswith("5") and s != "503"}
    ok = lost == 0 and repeated == 0 and not bad and no_retry_after == 0
    print("ha-demo: " + ("passed" if ok else f"FAILED (lost {lost}, repeated {repeated}, "
                                             f"errors {bad}, 503 without Retry-After {no_retry_after})"))
    return 0 if ok else 1


if __name__ == "__main__":
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    code = 1
    try:
        code = main()
    except Exception as e:  # print the logs' tails, then clean up
        print(f"ha-demo: FAILED: {e}", file=sys.stderr)
        for entry in sorted(os.listdir(tmp)):
            if entry.endswith(".log"):
                tail = open(os.path.join(tmp, entry), errors="replace").read()[-1500:]
                print(f"--- {entry} (tail)\n{tail}", file=sys.stderr)
    finally:
        stop.set()
        cleanup()
    sys.exit(code)
