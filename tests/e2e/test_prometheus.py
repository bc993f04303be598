"""Debian's real Prometheus (package `prometheus`) against a running
dmlserve's --metrics_port: promtool accepts the exposition as it is served,
and a Prometheus server scraping every second has the target up, with no
scrape error and no dropped samples, and answers PromQL queries over the
calls made (counts, histogram counts and a quantile)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import numpy as np

import dmlserve_client as dc
from e2e_server import (ServerTestCase, free_port, metric_samples,
                        scrape_metrics)

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
WAIT_SECONDS = 30


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode()


class PrometheusTest(ServerTestCase):

    METRICS_PORT = free_port()
    SERVER_ARGS = ("--metrics_port=%d" % METRICS_PORT,
                   "--metrics_address=127.0.0.1")

    def setUp(self):
        for tool in (PROMETHEUS, PROMTOOL):
            if not os.access(tool, os.X_OK):
                self.fail("%s is not installed (deploy/setup-debian.sh "
                          "installs Debian's prometheus)" % tool)

    def test_promtool_accepts_the_exposition(self):
        text = scrape_metrics(self.METRICS_PORT)
        result = subprocess.run([PROMTOOL, "check", "metrics"],
                                input=text.encode(), capture_output=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0,
                         (result.stdout + result.stderr).decode())

    def test_prometheus_scrapes_the_server_and_answers_queries(self):
        x = np.linspace(-3, 3, 1024, dtype=np.float32).reshape(32, 32)
        for _ in range(3):
            self.client.execute_activation("relu", x)
        with self.assertRaises(dc.DmlError):  # duplicate axes
            self.client.execute_mvn1(x.reshape(1, 1, 32, 32), axes=[2, 2])

        web = "127.0.0.1:%d" % free_port()
        self.start_prometheus(web)
        ok = 'dmlserve_requests_total{method="Execute",operator="relu",code="OK"}'
        rejected = ('dmlserve_requests_total{method="Execute",'
                    'operator="mvn1",code="INVALID_ARGUMENT"}')
        self.assertEqual(self.wait_for(web, ok, 3), 3)
        self.assertEqual(self.query(web, rejected), 1)
        self.assertEqual(self.query(web, 'up{job="dmlserve"}'), 1)
        self.assertEqual(self.query(
            web, 'dmlserve_request_duration_seconds_count{method="Execute"}'), 4)
        median = self.query(
            web, 'histogram_quantile(0.5, sum by (le) '
                 '(dmlserve_request_duration_seconds_bucket{method="Execute"}))')
        self.assertGreater(median, 0)
        self.assertLess(median, 10)
        self.assertGreaterEqual(
            self.query(web, 'dmlserve_queue_wait_seconds_count{device="0"}'), 3)
        self.assertEqual(self.query(web, 'count(dmlserve_build_info)'), 1)

        targets = json.loads(http_get("http://%s/api/v1/targets" % web))
        active = targets["data"]["activeTargets"]
        self.assertEqual(len(active), 1, active)
        self.assertEqual(active[0]["health"], "up", active[0])
        self.assertEqual(active[0]["lastError"], "", active[0])
        # Prometheus's own counters of samples it had to drop.
        own = metric_samples(http_get("http://%s/metrics" % web))
        for dropped in ("prometheus_target_scrapes_sample_duplicate_timestamp_total",
                        "prometheus_target_scrapes_sample_out_of_order_total",
                        "prometheus_target_scrapes_sample_out_of_bounds_total"):
            self.assertEqual(own.get(dropped), 0, dropped)

    def start_prometheus(self, web):
        home = tempfile.mkdtemp(prefix="dmls-prometheus-")
        self.addCleanup(shutil.rmtree, home, ignore_errors=True)
        config = os.path.join(home, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n"
                    "  scrape_interval: 1s\n"
                    "  scrape_timeout: 1s\n"
                    "scrape_configs:\n"
                    "  - job_name: dmlserve\n"
                    "    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % self.METRICS_PORT)
        self.prometheus_log = open(os.path.join(home, "log"), "w+")
        self.addCleanup(self.prometheus_log.close)
        process = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + config,
             "--storage.tsdb.path=" + os.path.join(home, "data"),
             "--web.listen-address=" + web, "--log.level=warn"],
            stdout=self.prometheus_log, stderr=subprocess.STDOUT)
        self.addCleanup(self.stop, process)
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                http_get("http://%s/-/ready" % web, timeout=1)
                return
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                self.fail("prometheus did not become ready: %s" % self.log())
            time.sleep(0.1)

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def log(self):
        self.prometheus_log.seek(0)
        return self.prometheus_log.read()[-4000:]

    def query(self, web, promql):
        """The value of an instant query with one result, None without."""
        url = "http://%s/api/v1/query?%s" % (
            web, urllib.parse.urlencode({"query": promql}))
        answer = json.loads(http_get(url))
        self.assertEqual(answer["status"], "success", answer)
        result = answer["data"]["result"]
        if not result:
            return None
        self.assertEqual(len(result), 1, (promql, result))
        return float(result[0]["value"][1])

    def wait_for(self, web, promql, value):
        """Polls `promql` until it equals `value` (the scrapes have caught
        up) or WAIT_SECONDS pass; returns the last value."""
        deadline = time.monotonic() + WAIT_SECONDS
        got = self.query(web, promql)
        while got != value and time.monotonic() < deadline:
            time.sleep(0.2)
            got = self.query(web, promql)
        if got != value:
            self.fail("%s is %s after %d s, want %s\n%s" %
                      (promql, got, WAIT_SECONDS, value, self.log()))
        return got


if __name__ == "__main__":
    unittest.main()
