"""A dmlserve process for the package's live tests: the binary named by
DMLSERVE_BIN (ctest sets it to the build's), on a free loopback port with
the CPU engine, ready once it prints its listening line and answers
GetCapabilities. Used from one thread."""

import os
import select
import signal
import socket
import subprocess
import tempfile
import time

import dmlserve

STARTUP_SECONDS = 30


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """start() runs the server; stop() ends it and returns its exit code."""

    def __init__(self):
        binary = os.environ.get("DMLSERVE_BIN")
        if not binary:
            raise RuntimeError("DMLSERVE_BIN must name a dmlserve binary "
                               "(ctest client_python_package sets it)")
        self.port = _free_port()
        self.target = "127.0.0.1:%d" % self.port
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [binary, "--device=cpu", "--address=127.0.0.1",
             "--port=%d" % self.port, "--log_level=warn",
             "--drain_seconds=0"],
            stdout=subprocess.PIPE, stderr=self.log)

    def start(self):
        deadline = time.monotonic() + STARTUP_SECONDS
        line = b""
        while b"listening on" not in line:
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise AssertionError("dmlserve did not start: " +
                                     self.stderr())
            ready, _, _ = select.select([self.process.stdout], [], [], 1.0)
            if ready:
                line = self.process.stdout.readline()
        with dmlserve.DmlClient(self.target, timeout=5) as client:
            while True:
                try:
                    client.capabilities()
                    return self
                except dmlserve.DmlError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

    def stderr(self):
        self.log.seek(0)
        return self.log.read()[-4000:]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()
