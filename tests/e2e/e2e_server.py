"""Shared harness of the dmlserve end-to-end tests.

Starts the real `dmlserve` binary on a free loopback port, waits for its
readiness line and for grpc.health.v1 SERVING, and stops it with SIGTERM
(with --drain_seconds=0 unless the test passes its own).
ServerTestCase gives each test class its own server and asserts, when the
class is done, that the server still answers health checks and exits 0.

Environment (set by tests/e2e/CMakeLists.txt): DMLSERVE_BIN, DMLCTL_BIN,
DMLS_SOURCE_DIR and PYTHONPATH holding the generated modules of proto/ and
tests/e2e/proto, and client/python. Optional: DMLS_E2E_DEVICE (default cpu);
DMLSERVE_PREFIX, a command dmlserve and dmlctl are started through (split
as a shell would: "/usr/lib/wine/wine64" runs dmlserve.exe and dmlctl.exe
under Wine; the tests start them as DMLSERVE_CMD and DMLCTL_CMD), and
DMLSERVE_STOP_SIGNAL, the signal that stops a server (STOP_SIGNAL: TERM by
default; INT under Wine, which turns it into the console's CTRL_C_EVENT,
while SIGTERM ends a Wine process at once).
"""

import os
import select
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

import grpc

import dmlserve_client as dc
from dmls_e2e import health_pb2, health_pb2_grpc

DMLSERVE_BIN = os.environ.get("DMLSERVE_BIN", "dmlserve")
DMLCTL_BIN = os.environ.get("DMLCTL_BIN", "dmlctl")
SERVER_PREFIX = shlex.split(os.environ.get("DMLSERVE_PREFIX", ""))
DMLSERVE_CMD = SERVER_PREFIX + [DMLSERVE_BIN]
DMLCTL_CMD = SERVER_PREFIX + [DMLCTL_BIN]
STOP_SIGNAL = getattr(signal, "SIG" + os.environ.get("DMLSERVE_STOP_SIGNAL", "TERM"))
# The server is a Windows build (under Wine): no SIGHUP, for one.
WINDOWS = os.environ.get("DMLS_E2E_WINDOWS") == "1"
SOURCE_DIR = os.environ.get(
    "DMLS_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

# The engine the tests run on: cpu by default (deterministic, always there);
# DMLS_E2E_DEVICE=auto, gpu or software runs the same suite on Direct3D 12
# (auto never falls back to the CPU engine); directml on DirectML.dll
# (Windows builds: deploy/windows/run-e2e.sh).
DEVICE = os.environ.get("DMLS_E2E_DEVICE", "cpu")
# device_kind values the capabilities may report for DEVICE.
DEVICE_KINDS = {"cpu": ("cpu",), "gpu": ("gpu",), "software": ("software",),
                "auto": ("gpu", "software"),
                "directml": ("gpu", "software")}[DEVICE]

STARTUP_SECONDS = 30


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_metrics(port, timeout=10):
    """The Prometheus text a server's --metrics_port serves at /metrics."""
    url = "http://127.0.0.1:%d/metrics" % port
    with urllib.request.urlopen(url, timeout=timeout) as response:
        if response.status != 200:
            raise AssertionError("GET %s: HTTP %d" % (url, response.status))
        return response.read().decode()


def metric_samples(text):
    """{'name{labels}': value} of every sample line of Prometheus text."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def health_status(target, service="", timeout=5.0, credentials=None,
                  options=()):
    """The grpc.health.v1 status name of `service`; raises grpc.RpcError.
    `credentials` (grpc.ChannelCredentials) for a TLS server."""
    channel = (grpc.secure_channel(target, credentials, options=options)
               if credentials is not None else grpc.insecure_channel(target))
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service),
                              timeout=timeout)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(
            response.status)


class Server:
    """One dmlserve process on 127.0.0.1:<free port>."""

    def __init__(self, *extra_args, credentials=None, channel_options=()):
        """`credentials`/`channel_options`: how to reach a TLS server for
        the health checks that tell it is ready."""
        self.extra_args = list(extra_args)
        self.credentials = credentials
        self.channel_options = channel_options
        self.port = None
        self.target = None
        self.process = None
        self.log = None

    def start(self):
        self.port = free_port()
        self.target = "127.0.0.1:%d" % self.port
        self.log = tempfile.TemporaryFile(mode="w+")
        args = DMLSERVE_CMD + ["--device=" + DEVICE, "--address=127.0.0.1",
                "--port=%d" % self.port, "--log_level=warn"]
        # No drain period unless a test asks for one: each class stops its
        # server with SIGTERM, and the default 5 s drain would add up.
        if not any(a.startswith("--drain_seconds") for a in self.extra_args):
            args.append("--drain_seconds=0")
        args += self.extra_args
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE,
                                        stderr=self.log)
        deadline = time.monotonic() + STARTUP_SECONDS
        line = b""
        while b"dmlserve listening on" not in line:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.poll() is not None:
                code = self.process.poll()
                log = self.stderr()
                self.kill()
                raise AssertionError("dmlserve did not start (exit code %s): %s"
                                     % (code, log))
            ready, _, _ = select.select([self.process.stdout], [], [],
                                        remaining)
            if ready:
                line = self.process.stdout.readline()
        listening = line.decode().split("listening on", 1)[1].strip()
        if not listening.endswith(":%d" % self.port):
            raise AssertionError("dmlserve listens on %s, expected port %d" %
                                 (listening, self.port))
        # Health is the real readiness signal for clients.
        while True:
            try:
                if health_status(self.target, timeout=2,
                                 credentials=self.credentials,
                                 options=self.channel_options) == "SERVING":
                    break
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError("dmlserve never reported SERVING")
            time.sleep(0.05)
        return self

    def stderr(self):
        if self.log is None:
            return ""
        self.log.seek(0)
        return self.log.read()[-4000:]

    def stop(self, timeout=30):
        """STOP_SIGNAL (SIGTERM) and wait; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(STOP_SIGNAL)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self):
        """Ends the process if it still runs and releases its pipes; the
        stderr log stays readable until the Server is dropped."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process is not None and self.process.stdout:
            self.process.stdout.close()

    def __del__(self):
        if self.log is not None:
            self.log.close()


class ServerTestCase(unittest.TestCase):
    """A test class with its own server (SERVER_ARGS) and client, which
    names TENANT (the `tenant` metadata) when set: resident tensors need an
    identity (server/security/principal.h)."""

    SERVER_ARGS = ()
    TENANT = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server(*cls.SERVER_ARGS).start()
        cls.target = cls.server.target
        cls.client = dc.DmlClient(cls.target, timeout=60, tenant=cls.TENANT)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        try:
            status = health_status(cls.target)
        except grpc.RpcError as e:
            status = "health check failed: %s" % e
        code = cls.server.stop()
        if status != "SERVING":
            raise AssertionError("after the tests the server is %s\n%s" %
                                 (status, cls.server.stderr()))
        if code != 0:
            raise AssertionError("dmlserve exited with %s after SIGTERM\n%s" %
                                 (code, cls.server.stderr()))
