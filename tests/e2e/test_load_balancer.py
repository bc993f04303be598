"""Three dmlserve replicas behind Debian's nginx as a gRPC load balancer
(deploy/nginx/dmlserve.conf), under load from several client threads.
Prints the figures (calls sent, failed, and which) for the record.

- A replica taken out of the upstream (nginx reloaded) and then sent
  SIGTERM: no call may fail; its calls in flight finish during its drain.
- SIGTERM with nginx not told: nginx (without active health checks, which
  only NGINX Plus has) cannot see the drain's NOT_SERVING and keeps sending
  until the replica stops accepting. At most the calls arriving at that
  moment may fail, UNAVAILABLE: the replica closes its sockets before
  gRPC's Shutdown, which would cancel them (CANCELLED, docs/OPERATIONS.md).
- SIGKILL: only the calls the replica had in flight may fail
  (UNAVAILABLE), one per client at most."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc
import numpy as np

import dmlserve_client as dc
from e2e_server import SOURCE_DIR, Server, free_port, STOP_SIGNAL
from resident_helpers import CELU, random_array
from test_security import Pki

sys.path.insert(0, os.path.join(SOURCE_DIR, "deploy", "nginx"))
import render_conf  # noqa: E402  (deploy/nginx/render_conf.py)

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CLIENTS = 6


class Load:
    """CLIENTS threads calling Execute (CELU on 16 KiB) through the balancer
    in a loop, each recording (start, end, code) of every call."""

    def __init__(self, target):
        self.target = target
        self.stop = threading.Event()
        self.calls = []  # (start, end, code name)
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, daemon=True)
                        for _ in range(CLIENTS)]
        self.x = np.linspace(-3, 3, 4096, dtype=np.float32)

    def run(self):
        client = dc.DmlClient(self.target, timeout=30)
        try:
            while not self.stop.is_set():
                start = time.monotonic()
                try:
                    client.execute_celu(self.x, alpha=1.0)
                    code = "OK"
                except dc.DmlError as e:
                    code = e.code.name if e.code else "?"
                with self.lock:
                    self.calls.append((start, time.monotonic(), code))
        finally:
            client.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)

    def failures(self):
        with self.lock:
            return [c for c in self.calls if c[2] != "OK"]

    def count(self, after=None):
        with self.lock:
            return sum(1 for c in self.calls if after is None or c[0] > after)


class BalancerCase(unittest.TestCase):
    """Three replicas behind nginx (deploy/nginx/dmlserve.conf rendered by
    render_conf.py). Subclasses change the replicas' flags, the rendering
    (TLS) and the clients through the hooks below."""

    def replica_args(self):
        return ()

    def server_kwargs(self):
        return {}

    def render_kwargs(self):
        return {}

    def direct_client(self, target, **kwargs):
        """A client of `target` (nginx or one replica)."""
        return dc.DmlClient(target, **kwargs)

    def client(self, **kwargs):
        return self.direct_client(self.target, **kwargs)

    def setUp(self):
        if not os.path.exists(NGINX):
            self.fail("nginx is not installed (deploy/setup-debian.sh installs it)")
        self.replicas = [Server("--drain_seconds=1", "--shutdown_grace_seconds=5",
                                *self.replica_args(), **self.server_kwargs())
                         .start() for _ in range(3)]
        self.addCleanup(self.stop_replicas)
        self.prefix = tempfile.mkdtemp(prefix="dmls-nginx-")
        self.addCleanup(shutil.rmtree, self.prefix, True)
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.mkdir(os.path.join(self.prefix, d))
        self.port = free_port()
        conf_path = self.write_conf(self.replicas)
        self.nginx = subprocess.Popen(
            [NGINX, "-p", self.prefix, "-c", conf_path, "-e",
             os.path.join(self.prefix, "error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self.stop_nginx)
        self.target = "127.0.0.1:%d" % self.port
        deadline = time.monotonic() + 15
        while True:
            try:
                with self.client(timeout=2) as c:
                    c.capabilities()
                break
            except dc.DmlError:
                if time.monotonic() > deadline or self.nginx.poll() is not None:
                    raise AssertionError("nginx did not come up: %s" %
                                         self.nginx_log())
                time.sleep(0.1)

    def write_conf(self, replicas):
        conf = render_conf.render([r.target for r in replicas],
                                  "127.0.0.1:%d" % self.port, self.prefix,
                                  **self.render_kwargs())
        conf_path = os.path.join(self.prefix, "nginx.conf")
        with open(conf_path, "w") as f:
            f.write(conf)
        return conf_path

    def nginx_log(self):
        try:
            with open(os.path.join(self.prefix, "error.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop_nginx(self):
        if self.nginx.poll() is None:
            self.nginx.send_signal(signal.SIGQUIT)
            try:
                self.nginx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
                self.nginx.wait()
        self.nginx.stderr.close()

    def stop_replicas(self):
        for r in self.replicas:
            r.kill()

    def report(self, name, load, event_time):
        failed = load.failures()
        codes = {}
        for _, _, code in failed:
            codes[code] = codes.get(code, 0) + 1
        print("\n%s: %d calls through nginx to 3 replicas, %d after the event, "
              "%d failed %s" % (name, load.count(), load.count(event_time),
                                len(failed), codes or ""))
        return failed

    def holders(self, handle, **identity):
        """The replicas (indices) whose listing for `identity` (the
        client's tenant= and token=) has `handle`."""
        found = []
        for i, r in enumerate(self.replicas):
            with self.direct_client(r.target, timeout=10, **identity) as c:
                if handle in [t.handle for t in c.list_tensors().tensors]:
                    found.append(i)
        return found

    def mixed_calls(self, clients, plain, handles, arrays, rounds):
        """Reads, Executes on handles, chains and listings of every tenant
        and plain Executes through the balancer; {code name: count}."""
        codes = {}

        def record(call, check):
            try:
                check(call())
                code = "OK"
            except dc.DmlError as e:
                code = e.code.name if e.code else "?"
            codes[code] = codes.get(code, 0) + 1

        for _ in range(rounds):
            for t, c in clients.items():
                h, x = handles[t], arrays[t]
                record(lambda: c.download(h),
                       lambda y: np.testing.assert_array_equal(y, x))
                record(lambda: c.execute(CELU, h), lambda y: self.assertEqual(y.shape, x.shape))
                record(lambda: c.chain([{"op": CELU, "input": h, "return_output": True}]),
                       lambda r: None)
                record(lambda: c.list_tensors(),
                       lambda r: self.assertIn(h.handle, [i.handle for i in r.tensors]))
            record(lambda: plain.execute_celu(arrays[next(iter(clients))]), lambda y: None)
        return codes


class LoadBalancerTest(BalancerCase):

    def test_sigterm_after_taking_it_out_of_nginx_fails_no_call(self):
        victim = self.replicas[0]
        with Load(self.target) as load:
            time.sleep(1.0)
            # What an orchestrator does: out of the balancer, then SIGTERM.
            self.write_conf(self.replicas[1:])
            self.nginx.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            event = time.monotonic()
            victim.process.send_signal(STOP_SIGNAL)
            code = victim.process.wait(timeout=30)
            time.sleep(1.0)  # the other two carry on
            after = load.count(time.monotonic() - 1.0)
        failed = self.report("reload + SIGTERM", load, event)
        self.assertEqual(code, 0, victim.stderr())
        self.assertEqual(failed, [], self.nginx_log())
        self.assertGreater(after, 0)

    def test_sigterm_unannounced_fails_at_most_the_calls_at_shutdown(self):
        victim = self.replicas[0]
        with Load(self.target) as load:
            time.sleep(1.0)
            event = time.monotonic()
            victim.process.send_signal(STOP_SIGNAL)
            code = victim.process.wait(timeout=30)
            time.sleep(1.0)
            after = load.count(time.monotonic() - 1.0)
        failed = self.report("SIGTERM", load, event)
        self.assertEqual(code, 0, victim.stderr())
        self.assertLessEqual(len(failed), CLIENTS, failed)
        for start, end, code_name in failed:
            # UNAVAILABLE: arrived in the moment between the replica's own
            # refusal ("the server is shutting down", once its calls are
            # over) and the close of its sockets, which nginx would have
            # retried elsewhere. Never CANCELLED (docs/OPERATIONS.md).
            self.assertEqual(code_name, "UNAVAILABLE")
            # Not during the 1 s drain, when the replica still serves.
            self.assertGreater(start, event + 0.9, (start, end, code_name))
        self.assertGreater(after, 0)

    def test_resident_tensors_reach_their_replica(self):
        # Round-robin per call sent 1 in 2 calls on a handle to a replica
        # without the tensor (issue 24); the hash on the tenant sends every
        # call of a tenant to one replica.
        tenants = ["lb-%d" % i for i in range(9)]
        clients = {t: dc.DmlClient(self.target, timeout=30, tenant=t) for t in tenants}
        plain = dc.DmlClient(self.target, timeout=30)
        try:
            arrays = {t: random_array((4, 8), seed=i) for i, t in enumerate(tenants)}
            handles = {t: clients[t].create_tensor(arrays[t]) for t in tenants}
            holders = {t: self.holders(handles[t].handle, tenant=t) for t in tenants}
            for t in tenants:
                self.assertEqual(len(holders[t]), 1, (t, holders[t]))
            self.assertGreater(len({h[0] for h in holders.values()}), 1, holders)
            codes = self.mixed_calls(clients, plain, handles, arrays, rounds=10)
            self.assertEqual(codes, {"OK": 10 * (4 * len(tenants) + 1)}, codes)
            # One replica lost: only its tenants lose their tensors, and
            # their handles say so (HANDLE_LOST, not HANDLE_NOT_FOUND).
            victim = holders[tenants[0]][0]
            self.replicas[victim].process.kill()
            self.replicas[victim].process.wait()
            lost = {t for t in tenants if holders[t][0] == victim}
            kept = [t for t in tenants if t not in lost]
            codes = self.mixed_calls({t: clients[t] for t in kept}, plain, handles, arrays,
                                     rounds=5)
            self.assertEqual(codes, {"OK": 5 * (4 * len(kept) + 1)}, codes)
            for t in lost:
                with self.assertRaises(dc.DmlError) as cm:
                    clients[t].download(handles[t])
                # Told apart from a wrong handle: gone with its replica.
                self.assertEqual(cm.exception.code.name, "NOT_FOUND")
                self.assertEqual(cm.exception.rule, "HANDLE_LOST", str(cm.exception))
        finally:
            for c in list(clients.values()) + [plain]:
                c.close()

    def test_kill_one_replica_fails_only_its_calls_in_flight(self):
        with Load(self.target) as load:
            time.sleep(1.0)
            event = time.monotonic()
            self.replicas[1].process.kill()
            self.replicas[1].process.wait()
            time.sleep(1.5)
            late = time.monotonic()
            time.sleep(1.0)
        failed = self.report("SIGKILL", load, event)
        # At most the calls in flight at the kill: one per client thread,
        # each started before the kill.
        self.assertLessEqual(len(failed), CLIENTS, failed)
        for start, end, code in failed:
            self.assertLess(start, event + 0.05, (start, end, code))
            self.assertEqual(code, "UNAVAILABLE")
        # Afterwards the two survivors answer everything.
        self.assertGreater(load.count(late), 0)


USERS = ["user%d" % i for i in range(6)]


def user_token(user, n):
    return "%s-token-%d-0123456789abcdef" % (user, n)


class TokenRoutingTest(BalancerCase):
    """Three TLS replicas with bearer tokens behind nginx, TLS on both sides
    (as deploy/k8s runs them). Every user has two tokens. nginx routes on
    the `tenant` metadata when a call sends one, else on the token, and the
    server accepts a tenant beside a token only when it names the token's
    principal (TENANT_MISMATCH): so a user's two tokens, each sent with the
    user's name as tenant, reach the replica that holds the user's tensors.
    Hashing the whole token (main before this test) sent a user's second
    token to another replica for about 2 users in 3."""

    def setUp(self):
        self.pki = Pki()
        self.addCleanup(self.pki.tmp.cleanup)
        with open(self.pki.path("tokens.txt"), "w") as f:
            for u in USERS:
                for n in (0, 1):
                    f.write("%s %s\n" % (user_token(u, n), u))
        super().setUp()

    def replica_args(self):
        return ("--tls_cert_file=" + self.pki.path("server.pem"),
                "--tls_key_file=" + self.pki.path("server.key"),
                "--auth_tokens_file=" + self.pki.path("tokens.txt"))

    def server_kwargs(self):
        return {"credentials": grpc.ssl_channel_credentials(
                    root_certificates=self.pki.read("ca.pem")),
                "channel_options": (("grpc.ssl_target_name_override", "localhost"),)}

    def render_kwargs(self):
        return {"server_tls": (self.pki.path("server.pem"), self.pki.path("server.key")),
                "upstream_tls": (self.pki.path("ca.pem"), "localhost")}

    def direct_client(self, target, **kwargs):
        kwargs.setdefault("token", user_token(USERS[0], 0))
        return dc.DmlClient(target, root_certificates=self.pki.path("ca.pem"),
                            server_name="localhost", **kwargs)

    def test_every_token_of_a_user_reaches_the_users_tensors(self):
        clients = {(u, n): self.client(timeout=30, token=user_token(u, n), tenant=u)
                   for u in USERS for n in (0, 1)}
        plain = self.client(timeout=30, token=user_token(USERS[0], 1))
        untagged = {u: self.client(timeout=30, token=user_token(u, 1)) for u in USERS}
        try:
            arrays = {u: random_array((4, 8), seed=i) for i, u in enumerate(USERS)}
            handles = {u: clients[(u, 0)].create_tensor(arrays[u]) for u in USERS}
            holders = {u: self.holders(handles[u].handle, token=user_token(u, 0))
                       for u in USERS}
            for u in USERS:
                self.assertEqual(len(holders[u]), 1, (u, holders[u]))
            self.assertGreater(len({h[0] for h in holders.values()}), 1, holders)
            codes = self.mixed_calls(clients, plain,
                                     {k: handles[k[0]] for k in clients},
                                     {k: arrays[k[0]] for k in clients}, rounds=5)
            self.assertEqual(codes, {"OK": 5 * (4 * len(clients) + 1)}, codes)
            # The routing key is checked: a tenant that is not the token's
            # principal is refused for every tensor call.
            impostor = self.client(timeout=30, token=user_token(USERS[0], 0),
                                   tenant=USERS[1])
            for call in (lambda: impostor.create_tensor(arrays[USERS[0]]),
                         lambda: impostor.download(handles[USERS[1]]),
                         impostor.list_tensors):
                with self.assertRaises(dc.DmlError) as cm:
                    call()
                self.assertEqual(cm.exception.code.name, "INVALID_ARGUMENT")
                self.assertEqual(cm.exception.rule, "TENANT_MISMATCH", str(cm.exception))
            impostor.close()
            # For the record: the second tokens without the tenant are routed
            # on the token, so some land elsewhere (HANDLE_LOST).
            missed = 0
            for u in USERS:
                try:
                    untagged[u].download(handles[u])
                except dc.DmlError as e:
                    self.assertEqual(e.rule, "HANDLE_LOST", str(e))
                    missed += 1
            print("\n%d users x 2 tokens through nginx to 3 TLS replicas: %s; "
                  "second token without the tenant: %d of %d users missed their "
                  "tensor" % (len(USERS), codes, missed, len(USERS)))
        finally:
            for c in list(clients.values()) + list(untagged.values()) + [plain]:
                c.close()


if __name__ == "__main__":
    unittest.main()
