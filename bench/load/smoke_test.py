"""Smoke test of the serving benchmark binaries (ctest bench_serving_smoke_*).

Starts echo_server or `dmlserve --device=cpu` on a free port (--port=0, the
address read from the readiness line), runs dmls_load against it for about
a second per RPC kind (unary, then ExecuteStream) at concurrency 4 with
1 KiB payloads and --check, and asserts that each JSON report shows
successful requests, no errors and no failed checks. Then SIGTERM: the
server must exit 0.
"""

import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

READY = re.compile(rb"listening on (\S+)")


def start_server(args):
    if args.server == "echo":
        cmd = [args.echo_server, "--port=0"]
    else:
        cmd = [args.dmlserve, "--device=cpu", "--port=0", "--log_level=warn"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 30
    line = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            match = READY.search(line)
            if match:
                return proc, match.group(1).decode()
            if not line:  # EOF: the server died
                break
        if proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    sys.exit("%s did not print its readiness line (last: %r, exit %s)"
             % (cmd[0], line, proc.returncode))


def run_load(args, target, rpc, workdir):
    report_path = os.path.join(workdir, "%s_%s.json" % (args.server, rpc))
    cmd = [args.dmls_load, "--target=" + target, "--rpc=" + rpc,
           "--concurrency=4", "--bytes=1KiB", "--op=celu", "--duration=1s",
           "--warmup=0.2s", "--check", "--json=" + report_path]
    if rpc == "stream":
        cmd.append("--streams=2")
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, timeout=40)
    print(result.stdout.decode(errors="replace"))
    if result.returncode != 0:
        sys.exit("dmls_load %s exited %d" % (rpc, result.returncode))
    with open(report_path) as f:
        report = json.load(f)
    problems = []
    if report["requests"] <= 0 or report["ok"] <= 0:
        problems.append("no successful requests")
    if report["errors"] != 0:
        problems.append("%d errors: %s" % (report["errors"],
                                          report["first_errors"]))
    if report["checked"] <= 0 or report["check_failures"] != 0:
        problems.append("checks: %d checked, %d failed %s" % (
            report["checked"], report["check_failures"],
            report["check_messages"]))
    late_errors = {code: n for code, n in report["late_status_counts"].items()
                   if code != "OK"}
    if late_errors:
        problems.append("requests failed or unanswered after the window: %s"
                        % late_errors)
    if report["unmatched_responses"] != 0:
        problems.append("%d unmatched responses"
                        % report["unmatched_responses"])
    if problems:
        sys.exit("%s %s: %s" % (args.server, rpc, "; ".join(problems)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", choices=["echo", "dmlserve"],
                        required=True)
    parser.add_argument("--dmls_load", required=True)
    parser.add_argument("--echo_server", required=True)
    parser.add_argument("--dmlserve", required=True)
    args = parser.parse_args()

    proc, target = start_server(args)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for rpc in ("unary", "stream"):
                run_load(args, target, rpc, workdir)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        sys.exit("%s exited %d after SIGTERM" % (args.server, proc.returncode))
    print("ok")


if __name__ == "__main__":
    main()
