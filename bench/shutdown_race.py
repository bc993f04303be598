#!/usr/bin/env python3
"""Counts calls lost at shutdown: ROUNDS times, start dmlserve (CPU engine,
drain 0), send CALLS concurrent CELU calls whose outputs are ROWS x 65536
float32 (from a broadcast row, so the requests are small), SIGTERM the
server DELAY seconds later, and count the calls that did not come back
whole. Every call was accepted before the SIGTERM, so each loss is a
defect (docs/OPERATIONS.md: a connection reset after the server finished
its calls, about 1 in 128 on the 2-core machine).

  PYTHONPATH=build/python:build/tests/e2e/python:client/python:tests/e2e \\
  DMLSERVE_BIN=build/server/dmlserve \\
  /usr/bin/python3 bench/shutdown_race.py [ROWS DELAY ROUNDS CALLS]
"""

import signal
import sys
import time

import grpc
import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import Server


def main():
    rows, delay, rounds, calls = 128, 0.2, 16, 8
    if len(sys.argv) == 5:
        rows, delay = int(sys.argv[1]), float(sys.argv[2])
        rounds, calls = int(sys.argv[3]), int(sys.argv[4])
    shape = (rows, 65536)
    request = pb.ExecuteRequest(request_id=1)
    celu = request.operator.celu
    celu.input.CopyFrom(dc.tensor_desc(pb.DATA_TYPE_FLOAT32, shape, [0, 1]))
    celu.output.CopyFrom(dc.tensor_desc(pb.DATA_TYPE_FLOAT32, shape))
    celu.alpha = 1.0
    request.input = np.linspace(-3, 3, 65536, dtype=np.float32).tobytes()
    lost, total, codes = 0, 0, {}
    for _ in range(rounds):
        server = Server("--max_tensor_bytes=%d" % (1 << 30),
                        "--max_message_bytes=%d" % (1 << 30)).start()
        channels = [grpc.insecure_channel(server.target, options=[
            ("grpc.max_receive_message_length", -1)]) for _ in range(calls)]
        futures = [pb_grpc.DmlServiceStub(c).Execute.future(
            request, timeout=60, metadata=[("dmls-max-output-ratio", "4096")])
            for c in channels]
        time.sleep(delay)
        server.process.send_signal(signal.SIGTERM)
        for f in futures:
            total += 1
            try:
                if len(f.result().output) != rows * 65536 * 4:
                    lost += 1
                    codes["short output"] = codes.get("short output", 0) + 1
            except grpc.RpcError as e:
                lost += 1
                key = "%s: %s" % (e.code().name, e.details())
                codes[key] = codes.get(key, 0) + 1
        server.process.wait(30)
        for c in channels:
            c.close()
    print("lost %d of %d calls %s" % (lost, total, codes))


if __name__ == "__main__":
    main()
