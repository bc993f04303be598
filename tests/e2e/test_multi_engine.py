"""End-to-end: one server over two Direct3D 12 engines.

Two engines on the software adapter (--adapters=llvmpipe,llvmpipe: naming an
adapter twice runs two engines on it, the testing stand-in for two GPUs).
GetCapabilities lists both devices, concurrent requests are spread over both
and stay exact, the engine counters logged at shutdown carry one prefix
per engine, and the metrics carry one `device` label per engine whose
figures match those counters. Device loss is covered by the C++ tests (multi_gpu_test.cc),
which can inject it.
"""

import re
import subprocess
import unittest

import grpc
import numpy as np

import e2e_server
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc


def relu_request(request_id, values):
    n = values.size
    desc = pb.TensorDesc(data_type=pb.DATA_TYPE_FLOAT32, sizes=[1, n],
                         total_tensor_size_in_bytes=4 * n)
    op = pb.OperatorDesc(relu=pb.ActivationRelu(input=desc, output=desc))
    return pb.ExecuteRequest(request_id=request_id, operator=op,
                             input=values.astype("<f4").tobytes())


class MultiEngineTest(unittest.TestCase):

    def test_two_engines_share_the_load_and_list_their_devices(self):
        metrics_port = e2e_server.free_port()
        server = e2e_server.Server("--device=software",
                                   "--adapters=llvmpipe,llvmpipe",
                                   "--log_level=info",
                                   "--metrics_port=%d" % metrics_port,
                                   "--metrics_address=127.0.0.1")
        server.start()
        n = 300
        try:
            channel = grpc.insecure_channel(server.target)
            stub = pb_grpc.DmlServiceStub(channel)
            caps = stub.GetCapabilities(pb.GetCapabilitiesRequest(), timeout=30)
            self.assertEqual(len(caps.devices), 2, caps.devices)
            self.assertEqual(caps.devices[0].name, caps.devices[1].name)
            self.assertIn("llvmpipe", caps.devices[0].name)
            self.assertEqual(caps.devices[0].kind, "software")
            self.assertIn("d3d12", caps.devices[1].backend)
            self.assertEqual(caps.device_name, "2 x " + caps.devices[0].name)
            self.assertEqual(e2e_server.health_status(server.target),
                             "SERVING")
            rng = np.random.default_rng(11)
            inputs, futures = [], []
            for i in range(n):
                values = rng.standard_normal(1 + (i * 37) % 5000).astype(
                    np.float32)
                inputs.append(values)
                futures.append(stub.Execute.future(relu_request(i, values),
                                                   timeout=120))
            for i, f in enumerate(futures):
                response = f.result()
                got = np.frombuffer(response.output, dtype="<f4")
                want = np.maximum(inputs[i], 0)
                np.testing.assert_array_equal(got[:want.size], want)
                self.assertEqual(response.request_id, i)
            channel.close()
            metrics = e2e_server.metric_samples(
                e2e_server.scrape_metrics(metrics_port))
        finally:
            self.assertEqual(server.stop(), 0)
        log = server.stderr()
        self.assertIn("device 1 of 2", log)
        match = re.search(r"engine counters: (.*)", log)
        self.assertIsNotNone(match, log)
        counters = dict(kv.split("=") for kv in match.group(1).split())
        self.assertEqual(int(counters["routed"]), n, counters)
        self.assertEqual(int(counters["engines_lost"]), 0, counters)
        first = int(counters["software0.requests"])
        second = int(counters["software1.requests"])
        self.assertEqual(first + second, n, counters)
        self.assertGreater(first, 0, counters)
        self.assertGreater(second, 0, counters)
        self.check_metrics(metrics, n, [first, second])

    def check_metrics(self, m, n, per_device):
        """The scrape `m` after `n` requests, `per_device[i]` of them run by
        engine i (its own counters)."""
        self.assertEqual(
            m['dmlserve_requests_total{code="OK",method="Execute",'
              'operator="relu"}'], n)
        for device, count in enumerate(per_device):
            label = '{device="%d"}' % device
            self.assertEqual(m["dmlserve_queue_wait_seconds_count" + label],
                             count, device)
            self.assertEqual(
                m["dmlserve_execute_duration_seconds_count" + label], count,
                device)
            self.assertEqual(m["dmlserve_batch_requests_sum" + label], count,
                             device)
            self.assertEqual(m["dmlserve_queue_depth" + label], 0, device)
            self.assertGreater(
                m["dmlserve_device_memory_cap_bytes" + label], 0, device)
            self.assertGreater(m["dmlserve_pipeline_cache_entries" + label],
                               0, device)
            self.assertGreater(
                m['dmlserve_device_memory_held_bytes{device="%d",'
                  'kind="arenas"}' % device], 0, device)
        self.assertNotIn('dmlserve_queue_depth{device="2"}', m)
        # One build_info series, although both engines share an adapter name.
        info = [k for k in m if k.startswith("dmlserve_build_info{")]
        self.assertEqual(len(info), 1, info)
        self.assertIn('backend="d3d12', info[0])

    def test_adapter_and_adapters_exclude_each_other(self):
        result = subprocess.run(
            e2e_server.DMLSERVE_CMD + ["--device=software",
             "--adapter=llvmpipe", "--adapters=0", "--port=0"],
            capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"exclude each other", result.stderr)

    def test_an_adapter_list_that_selects_nothing_fails_startup(self):
        result = subprocess.run(
            e2e_server.DMLSERVE_CMD + ["--device=software",
             "--adapters=no such adapter", "--port=0"],
            capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"no such adapter", result.stderr)


if __name__ == "__main__":
    unittest.main()
