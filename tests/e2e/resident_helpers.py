"""Helpers shared by the end-to-end tests of resident tensors, chains and
chunked streams (test_resident, test_chains, test_chunked): operator
descriptors, the rule id of a rejection, the server's resident set size.
"""

import time

import grpc
import numpy as np

import dmlserve_client as dc

CELU = {"celu": {"alpha": 1.5}}
THRESHOLD = {"threshold": {"min": 0.25}}


def mvn1_op(axes, fused=None):
    """MVN1 over `axes` (normalize variance, epsilon 1e-5), JSON form."""
    op = {"mvn1": {"axes": list(axes), "axisCount": len(axes),
                   "normalizeVariance": True, "epsilon": 1e-5}}
    if fused is not None:
        op["mvn1"]["fusedActivation"] = {fused: {}}
    return op


def rule_of(error):
    """The rule id of a DmlError: its first violation's, else the message's
    prefix (RESOURCE_EXHAUSTED and NOT_FOUND carry it there)."""
    if error.rule:
        return error.rule
    return (error.message or "").split(":", 1)[0].strip()


def rpc_rule(error):
    """The rule id of a raw grpc.RpcError."""
    return rule_of(dc.error_from_rpc(error))


class RejectionAsserts:
    """Mixin for unittest.TestCase: assertRejected."""

    def assertRejected(self, call, code, rule, field=None, field_prefix=None):
        """Runs call(); it must raise DmlError with `code` and `rule` (and
        the first violation's field, exactly or by prefix). Returns it."""
        with self.assertRaises(dc.DmlError) as cm:
            call()
        e = cm.exception
        self.assertEqual(e.code, code, str(e))
        self.assertEqual(rule_of(e), rule, str(e))
        if field is not None:
            self.assertEqual(e.field, field, str(e))
        if field_prefix is not None:
            self.assertTrue((e.field or "").startswith(field_prefix), str(e))
        return e


NOT_FOUND = grpc.StatusCode.NOT_FOUND
INVALID = grpc.StatusCode.INVALID_ARGUMENT
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


def rss_bytes(pid):
    """Resident set size of process `pid` (VmRSS), in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for pid %d" % pid)


def wait_for(predicate, seconds=10.0, interval=0.05):
    """Polls predicate() until true or `seconds` pass; returns its last
    value."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def random_array(shape, seed, dtype=np.float32, low=-3.0, high=3.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)
