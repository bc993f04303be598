"""The server's own stop before gRPC's Shutdown (docs/OPERATIONS.md, "rare
loss"): large calls accepted before SIGTERM all come back whole, a call
that arrives once the server has stopped accepting gets UNAVAILABLE "the
server is shutting down" at once (not a hang), and an ExecuteStream the
client keeps open is told to finish instead of being waited on for the
whole grace."""

import queue
import time
import unittest

import grpc

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import Server, health_status, STOP_SIGNAL
from test_limits import broadcast_mvn1_request, broadcast_request, celu_request

SHUTTING_DOWN = "the server is shutting down"
UNLIMITED = ("--max_tensor_bytes=%d" % (1 << 30),
             "--max_message_bytes=%d" % (1 << 30))
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)]
RATIO = [("dmls-max-output-ratio", "4096")]


class ShutdownTest(unittest.TestCase):

    def test_large_calls_accepted_before_sigterm_come_back_whole(self):
        # bench/shutdown_race.py in small: without the server's own stop,
        # about 1 call in 100 of these came back "Connection reset by peer".
        rows, calls, rounds = 64, 8, 4
        request = broadcast_request(rows, 65536, request_id=rows)
        lost = []
        for _ in range(rounds):
            server = Server(*UNLIMITED).start()
            try:
                channels = [grpc.insecure_channel(server.target,
                                                  options=CHANNEL_OPTIONS)
                            for _ in range(calls)]
                futures = [pb_grpc.DmlServiceStub(c).Execute.future(
                    request, timeout=60, metadata=RATIO) for c in channels]
                time.sleep(0.2)
                server.process.send_signal(STOP_SIGNAL)
                for f in futures:
                    try:
                        if len(f.result().output) != rows * 65536 * 4:
                            lost.append("short output")
                    except grpc.RpcError as e:
                        lost.append("%s: %s" % (e.code().name, e.details()))
                self.assertEqual(server.process.wait(timeout=30), 0,
                                 server.stderr())
                for c in channels:
                    c.close()
            finally:
                server.kill()
        self.assertEqual(lost, [])

    def test_a_call_after_the_stop_began_is_refused_at_once(self):
        # One engine thread busy with a long call keeps the server in its
        # stop (waiting for that call) for seconds after SIGTERM: it serves
        # on for up to 1 s (kQuiesceWait), then refuses new calls. A grace
        # of 60 s: the call takes about 3 s alone, but more than 10 beside
        # lavapipe compiling kernels on both cores (a fresh-clone CI run
        # with an empty Mesa cache), and the grace cancelled it.
        server = Server("--worker_threads=1", "--shutdown_grace_seconds=60",
                        *UNLIMITED).start()
        try:
            channel = grpc.insecure_channel(server.target,
                                            options=CHANNEL_OPTIONS)
            stub = pb_grpc.DmlServiceStub(channel)
            stub.GetCapabilities(pb.GetCapabilitiesRequest(), timeout=10)
            # MVN1 + GELU over 1024 rows: about 3 s on one thread here.
            long_call = stub.Execute.future(
                broadcast_mvn1_request(1024, 1, fused_gelu=True), timeout=60,
                metadata=RATIO)
            time.sleep(0.3)  # the long call is on the engine thread
            signalled = time.monotonic()
            server.process.send_signal(STOP_SIGNAL)
            refused = None
            while refused is None and time.monotonic() < signalled + 5:
                try:
                    # Answered inline, so never held up by the engine.
                    stub.GetCapabilities(pb.GetCapabilitiesRequest(),
                                         timeout=2)
                except grpc.RpcError as e:
                    refused = e
                time.sleep(0.01)
            self.assertIsNotNone(refused, "no call was refused")
            self.assertEqual(refused.code(), grpc.StatusCode.UNAVAILABLE,
                             refused.details())
            self.assertEqual(refused.details(), SHUTTING_DOWN)
            self.assertLess(time.monotonic() - signalled, 2.5)
            self.assertFalse(long_call.done(), "the stop came too late")
            # Every method refuses at once, streams too; health says
            # NOT_SERVING.
            small, _, _ = celu_request((2, 3))
            for call in (lambda: stub.Execute(small, timeout=2),
                         lambda: list(stub.ExecuteStream(iter([small]),
                                                         timeout=2))):
                with self.assertRaises(grpc.RpcError) as cm:
                    call()
                self.assertEqual(cm.exception.code(),
                                 grpc.StatusCode.UNAVAILABLE)
                self.assertEqual(cm.exception.details(), SHUTTING_DOWN)
            self.assertEqual(health_status(server.target, timeout=5),
                             "NOT_SERVING")
            # The call accepted before the stop is answered whole.
            self.assertEqual(len(long_call.result().output),
                             1024 * 65536 * 4)
            self.assertEqual(server.process.wait(timeout=30), 0,
                             server.stderr())
            channel.close()
        finally:
            server.kill()

    def test_an_open_stream_is_told_to_finish(self):
        grace = 10
        server = Server("--shutdown_grace_seconds=%d" % grace).start()
        try:
            client = dc.DmlClient(server.target, timeout=60)
            outgoing = queue.Queue()

            def feed():  # a client that keeps its stream open
                while True:
                    item = outgoing.get()
                    if item is None:
                        return
                    yield item

            call = client.stub.ExecuteStream(feed(), timeout=60)
            for i in range(2):
                request, _, _ = celu_request((4, 8), request_id=i, seed=i)
                outgoing.put(request)
                self.assertEqual(next(call).request_id, i)
            signalled = time.monotonic()
            server.process.send_signal(STOP_SIGNAL)
            with self.assertRaises(grpc.RpcError) as cm:
                for _ in call:
                    pass
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertEqual(cm.exception.details(), SHUTTING_DOWN)
            self.assertEqual(server.process.wait(timeout=30), 0,
                             server.stderr())
            # Not waited on for the grace (which would end in CANCELLED).
            self.assertLess(time.monotonic() - signalled, grace / 2)
            outgoing.put(None)
            client.close()
        finally:
            server.kill()


if __name__ == "__main__":
    unittest.main()
