"""A stop that refuses (issue 24): unary loops and ExecuteStreams keep
calling across SIGTERM, the drain and its end. Every call the server
accepted is answered; every call that comes once it stopped accepting gets
UNAVAILABLE (retryable), never CANCELLED, and none is left without an
answer. A loop retries a refused call RETRIES times, RETRY_BACKOFF apart
(a client's retry policy), then stops, as a client that moves to another
replica does; so calls keep coming after the server stopped accepting.

The engine is DMLS_E2E_DEVICE's (cpu, or Direct3D 12 through the software
adapter in the e2e_d3d12_ variant). Run as a script for the probe's counts:
  python3 test_stop.py --probe ROUNDS
"""

import collections
import queue
import sys
import threading
import time
import unittest

import grpc

from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import Server, STOP_SIGNAL
from test_limits import celu_request

SHUTTING_DOWN = "the server is shutting down"
UNARY_LOOPS = 32
STREAMS = 4
CHANNELS = 4
# Traffic before SIGTERM; the drain then serves on for DRAIN_SECONDS.
WARMUP_SECONDS = 0.5
DRAIN_SECONDS = 1
RETRIES = 4
RETRY_BACKOFF = 0.01


def _outcome(error):
    """'OK', 'UNAVAILABLE' (any retryable refusal) or the code and detail
    of anything else: what the probe counts as lost."""
    if error is None:
        return "OK"
    code = error.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return "UNAVAILABLE"
    return "%s: %s" % (code.name, error.details())


def _unary_loop(stub, counts, lock, stop_at):
    request, _, _ = celu_request((2, 3))
    refusals = 0
    while time.monotonic() < stop_at:
        error = None
        try:
            reply = stub.Execute(request, timeout=20)
            if len(reply.output) != 2 * 3 * 4:
                error = "short output"
        except grpc.RpcError as e:
            error = e
        outcome = error if isinstance(error, str) else _outcome(error)
        with lock:
            counts[outcome] += 1
            if outcome == "UNAVAILABLE" and error.details() == SHUTTING_DOWN:
                counts["refused by the server"] += 1
        if outcome == "UNAVAILABLE" and refusals < RETRIES:
            refusals += 1
            time.sleep(RETRY_BACKOFF)
        elif outcome != "OK":
            return


def _stream_loop(stub, counts, lock, stop_at):
    """One ExecuteStream, one request at a time; every request it sent is
    answered unless the stream ends UNAVAILABLE (then the server never
    read it: not accepted, retryable)."""
    outgoing = queue.Queue()

    def feed():
        while True:
            item = outgoing.get()
            if item is None:
                return
            yield item

    call = stub.ExecuteStream(feed(), timeout=20)
    answered = 0
    error = None
    try:
        for i in range(1 << 30):
            if time.monotonic() >= stop_at:
                break
            request, _, _ = celu_request((4, 8), request_id=i, seed=i % 7)
            outgoing.put(request)
            reply = next(call)
            if reply.request_id != i or len(reply.output) != 4 * 8 * 4:
                error = "wrong reply"
                break
            answered += 1
    except StopIteration:
        error = "stream ended OK with a request unanswered"
    except grpc.RpcError as e:
        error = e
    finally:
        outgoing.put(None)
    outcome = error if isinstance(error, str) else _outcome(error)
    with lock:
        counts["stream replies"] += answered
        counts["stream " + outcome] += 1
        if outcome == "UNAVAILABLE" and error.details() == SHUTTING_DOWN:
            counts["refused by the server"] += 1


def probe(*server_args):
    """One server under UNARY_LOOPS loops and STREAMS streams, SIGTERM
    after WARMUP_SECONDS; returns (counts, exit code, stderr)."""
    server = Server("--drain_seconds=%d" % DRAIN_SECONDS, *server_args).start()
    counts = collections.Counter()
    lock = threading.Lock()
    try:
        channels = [grpc.insecure_channel(server.target)
                    for _ in range(CHANNELS)]
        stubs = [pb_grpc.DmlServiceStub(c) for c in channels]
        stop_at = time.monotonic() + 30  # a bound; the stop ends them first
        threads = [threading.Thread(target=_unary_loop,
                                    args=(stubs[i % CHANNELS], counts, lock,
                                          stop_at))
                   for i in range(UNARY_LOOPS)]
        threads += [threading.Thread(target=_stream_loop,
                                     args=(stubs[i % CHANNELS], counts, lock,
                                           stop_at))
                    for i in range(STREAMS)]
        for t in threads:
            t.start()
        time.sleep(WARMUP_SECONDS)
        with lock:
            before = counts["OK"]
        server.process.send_signal(STOP_SIGNAL)
        for t in threads:
            t.join(timeout=40)
        alive = sum(t.is_alive() for t in threads)
        code = server.process.wait(timeout=30)
        with lock:
            counts["OK after SIGTERM"] = counts["OK"] - before
            counts["loops never ended"] = alive
        for c in channels:
            c.close()
        return counts, code, server.stderr()
    finally:
        server.kill()


def lost(counts):
    """The outcomes that are neither an answer nor a retryable refusal."""
    good = {"OK", "UNAVAILABLE", "stream UNAVAILABLE", "stream replies",
            "refused by the server", "OK after SIGTERM"}
    return {k: v for k, v in counts.items() if k not in good and v}


class StopTest(unittest.TestCase):

    def test_calls_across_the_end_of_the_drain_are_answered_or_refused(self):
        refused = []
        # At least two rounds; more (at most four) until the stop has
        # refused a call itself.
        for round_ in range(4):
            counts, code, log = probe()
            self.assertEqual(lost(counts), {}, "%s\n%s" % (dict(counts), log))
            self.assertEqual(code, 0, log)
            # The drain served calls.
            self.assertGreater(counts["OK after SIGTERM"], 0, dict(counts))
            refused.append(dict(counts))
            seen = sum(c.get("refused by the server", 0) for c in refused)
            if round_ >= 1 and seen > 0:
                break
        # And the stop refused some of the rest itself. The window for that
        # (from the idle moment to the sockets' close) is short: on a busy
        # machine a round can miss it (stop 25: load 4, 0 of 160; stop 26:
        # two rounds in a row beside a build), so it is counted over up to
        # four rounds. test_shutdown's
        # test_a_call_after_the_stop_began_is_refused_at_once checks the
        # refusal itself, deterministically.
        self.assertGreater(seen, 0, refused)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--probe":
        for _ in range(int(sys.argv[2])):
            counts, code, _ = probe()
            print("exit %d lost %d %s" % (code, sum(lost(counts).values()),
                                          dict(sorted(counts.items()))),
                  flush=True)
    else:
        unittest.main()
