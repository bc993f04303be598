"""The Prometheus endpoint (--metrics_port) of a running server, scraped
over HTTP after a known mix of calls: every family is there, request
counts match the calls made, histograms count every request, byte counters
and gauges carry sensible values."""

import unittest

import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from e2e_server import (Server, ServerTestCase, free_port, metric_samples,
                        scrape_metrics)

FAMILIES = (
    "dmlserve_requests_total", "dmlserve_request_duration_seconds",
    "dmlserve_request_bytes_total", "dmlserve_response_bytes_total",
    "dmlserve_queue_wait_seconds", "dmlserve_execute_duration_seconds",
    "dmlserve_batch_requests", "dmlserve_queue_depth",
    "dmlserve_in_flight_requests", "dmlserve_device_memory_bytes",
    "dmlserve_device_memory_cap_bytes", "dmlserve_device_memory_held_bytes",
    "dmlserve_pipeline_cache_entries", "dmlserve_resident_tensors",
    "dmlserve_resident_tensor_bytes", "dmlserve_engine_stat",
    "dmlserve_build_info")


class MetricsTest(ServerTestCase):

    METRICS_PORT = free_port()
    SERVER_ARGS = ("--metrics_port=%d" % METRICS_PORT,
                   "--metrics_address=127.0.0.1")

    def test_families_and_values_after_a_known_load(self):
        x = np.linspace(-3, 3, 4096, dtype=np.float32).reshape(64, 64)
        for _ in range(5):
            self.client.execute_celu(x, alpha=1.0)
        with self.assertRaises(dc.DmlError):  # duplicate axes
            self.client.execute_mvn1(x.reshape(1, 1, 64, 64), axes=[2, 2])
        celu = {"celu": {"input": {}, "output": {}, "alpha": 1.0}}
        responses = self.client.stream(
            [dc.build_request(celu, {"input": x}, request_id=i)[0]
             for i in range(4)])
        self.assertEqual([r.status_code for r in responses], [0] * 4)
        tenant = dc.DmlClient(self.target, tenant="metrics")
        self.addCleanup(tenant.close)
        handle = tenant.create_tensor(x)
        self.addCleanup(lambda: tenant.release(handle))

        text = scrape_metrics(self.METRICS_PORT)
        for family in FAMILIES:
            self.assertIn("# TYPE %s " % family, text, family)
        s = metric_samples(text)
        self.assertEqual(
            s['dmlserve_requests_total{code="OK",method="Execute",'
              'operator="celu"}'], 5)
        self.assertEqual(
            s['dmlserve_requests_total{code="INVALID_ARGUMENT",'
              'method="Execute",operator="mvn1"}'], 1)
        executed = sum(v for k, v in s.items()
                       if k.startswith("dmlserve_requests_total{")
                       and 'method="Execute"' in k)
        self.assertEqual(
            s['dmlserve_request_duration_seconds_count{method="Execute"}'],
            executed)
        # 5 CELU inputs of 16 KiB (and the rejected request's 16 KiB).
        self.assertGreaterEqual(
            s['dmlserve_request_bytes_total{method="Execute"}'], 5 * 16384)
        self.assertEqual(
            s['dmlserve_response_bytes_total{method="Execute"}'], 5 * 16384)
        self.assertEqual(
            s['dmlserve_requests_total{code="OK",method="ExecuteStream",'
              'operator="celu"}'], 4)
        # Every accepted request went through the device's queue.
        self.assertGreaterEqual(
            s['dmlserve_queue_wait_seconds_count{device="0"}'], 9)
        self.assertGreaterEqual(
            s['dmlserve_execute_duration_seconds_count{device="0"}'], 9)
        self.assertGreaterEqual(s['dmlserve_batch_requests_count{device="0"}'], 1)
        self.assertEqual(s['dmlserve_queue_depth{device="0"}'], 0)
        self.assertEqual(s["dmlserve_in_flight_requests"], 0)
        self.assertEqual(s["dmlserve_resident_tensors"], 1)
        self.assertEqual(s["dmlserve_resident_tensor_bytes"], x.nbytes)
        info = [k for k in s if k.startswith("dmlserve_build_info{")]
        self.assertEqual(len(info), 1)
        self.assertRegex(info[0], r'version="[0-9]')
        caps = self.client.capabilities()
        self.assertEqual(s['dmlserve_device_memory_cap_bytes{device="0"}'],
                         caps.limits.device_memory_cap_bytes)
        if caps.device_kind != "cpu":
            self.assertGreater(s['dmlserve_pipeline_cache_entries{device="0"}'], 0)
            self.assertGreater(
                s['dmlserve_device_memory_held_bytes{device="0",kind="arenas"}'], 0)

    def test_a_taken_metrics_port_stops_the_server(self):
        with self.assertRaises(AssertionError) as ctx:
            Server("--metrics_port=%d" % self.METRICS_PORT,
                   "--metrics_address=127.0.0.1").start()
        self.assertIn("cannot serve metrics", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
