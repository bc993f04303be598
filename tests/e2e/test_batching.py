"""End-to-end: concurrent small requests through the real server on the
Direct3D 12 engine (lavapipe) are batched and coalesced, and every result is
still exact.

The server logs its engine counters when it stops; the test reads them to
check that far fewer dispatches ran than requests arrived.
"""

import re
import unittest

import grpc
import numpy as np

import e2e_server
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc


def relu_request(request_id, values, in_place=False):
    n = values.size
    desc = pb.TensorDesc(data_type=pb.DATA_TYPE_FLOAT32, sizes=[1, n],
                         total_tensor_size_in_bytes=4 * n)
    op = pb.OperatorDesc(relu=pb.ActivationRelu(input=desc, output=desc))
    return pb.ExecuteRequest(request_id=request_id, operator=op,
                             input=values.astype("<f4").tobytes(),
                             in_place=in_place)


class BatchingTest(unittest.TestCase):

    def test_concurrent_small_requests_coalesce_and_stay_exact(self):
        # 257 calls are sent at once and gRPC may admit them in any order:
        # the in-flight limit (256 by default) must not be what is tested.
        # The batcher waits up to 50 ms for a fuller batch: on a loaded
        # machine the client sends the burst slower than lavapipe runs it,
        # and without a wait the batches stay small (95 dispatches for 257
        # requests once in CI-like load).
        server = e2e_server.Server("--device=software", "--log_level=info",
                                   "--max_in_flight=1024",
                                   "--max_queue_delay_us=50000")
        server.start()
        try:
            channel = grpc.insecure_channel(server.target, options=[
                ("grpc.max_receive_message_length", 64 << 20),
                ("grpc.max_send_message_length", 64 << 20)])
            stub = pb_grpc.DmlServiceStub(channel)
            # A slow request first (milliseconds on lavapipe), so that the
            # burst behind it queues up while the device is busy.
            slow = relu_request(0, np.zeros(1 << 21, dtype=np.float32))
            slow_future = stub.Execute.future(slow, timeout=120)
            rng = np.random.default_rng(7)
            inputs, futures = [], []
            for i in range(1, 257):
                values = rng.standard_normal(1 + (i * 13) % 300).astype(
                    np.float32)
                inputs.append(values)
                futures.append(stub.Execute.future(
                    relu_request(i, values, in_place=(i % 5 == 0)),
                    timeout=120))
            for i, f in enumerate(futures):
                response = f.result()
                got = np.frombuffer(response.output, dtype="<f4")
                want = np.maximum(inputs[i], 0)
                np.testing.assert_array_equal(got[:want.size], want)
                self.assertEqual(response.request_id, i + 1)
            slow_future.result()
            channel.close()
        finally:
            self.assertEqual(server.stop(), 0)
        log = server.stderr()
        match = re.search(r"engine counters: (.*)", log)
        self.assertIsNotNone(match, log)
        counters = dict(kv.split("=") for kv in match.group(1).split())
        requests = int(counters["requests"])
        dispatches = int(counters["dispatches"])
        self.assertEqual(requests, 257)
        self.assertGreaterEqual(int(counters["coalesced_requests"]), 128,
                                counters)
        self.assertLess(dispatches, requests // 4, counters)
        self.assertEqual(int(counters["views_created"]), 13, counters)


if __name__ == "__main__":
    unittest.main()
