"""Resident tensors (TensorService) end to end: the handle lifecycle
(create, write, read, list, release), Execute with handles, ownership
(another tenant or channel gets NOT_FOUND), expiry and quotas."""

import time
import unittest

import numpy as np

import dmlserve_client as dc
import reference as ref
from dmlserve.v1 import dmlserve_pb2 as pb
from e2e_server import ServerTestCase
from resident_helpers import (CELU, EXHAUSTED, INVALID, NOT_FOUND,
                              RejectionAsserts, mvn1_op, random_array)


def celu_ref(x):
    return ref.activation("celu", x, CELU["celu"])


def release_all(client):
    for t in client.list_tensors().tensors:
        client.release(t)


class LifecycleTest(RejectionAsserts, ServerTestCase):
    TENANT = "lifecycle"

    def setUp(self):
        release_all(self.client)  # each test starts with no tensor

    def test_create_read_list_release(self):
        x = random_array((3, 5, 7), seed=1)
        before = int(time.time() * 1000)
        h = self.client.create_tensor(x)
        self.assertRegex(h.handle, r"^t-[0-9a-f]{32}$")
        self.assertEqual(h.size, 3 * 5 * 7 * 4)
        self.assertEqual(h.size, h.desc.total_tensor_size_in_bytes)
        self.assertEqual(list(h.desc.sizes), [3, 5, 7])
        self.assertGreater(h.expiry, before)  # the default ttl is an hour
        listing = self.client.list_tensors()
        self.assertEqual([t.handle for t in listing.tensors], [h.handle])
        self.assertEqual(listing.tensors[0].size, h.size)
        self.assertEqual(listing.principal_bytes, h.size)
        self.assertGreater(listing.principal_quota_bytes, 0)
        np.testing.assert_array_equal(self.client.download(h), x)
        # A bare handle string works too (the desc comes from the listing).
        np.testing.assert_array_equal(self.client.download(h.handle), x)
        self.client.release(h)
        listing = self.client.list_tensors()
        self.assertEqual(listing.tensors, [])
        self.assertEqual(listing.principal_bytes, 0)
        for call in (lambda: self.client.download(h),
                     lambda: self.client.release(h),
                     lambda: self.client.upload(x, handle=h)):
            self.assertRejected(call, NOT_FOUND, "HANDLE_NOT_FOUND")

    def test_handles_are_distinct_and_unknown_ones_not_found(self):
        handles = {self.client.create_tensor(dc.tensor_desc(np.float32, (4,)))
                   .handle for _ in range(8)}
        self.assertEqual(len(handles), 8)
        for bogus in ("t-" + "0" * 32, "", "not-a-handle"):
            self.assertRejected(
                lambda: self.client.download(bogus, offset=0, length=4),
                NOT_FOUND, "HANDLE_NOT_FOUND")

    def test_create_from_desc_starts_zeroed(self):
        desc = dc.tensor_desc(np.float16, (2, 9))
        h = self.client.create_tensor(desc, ttl=30)
        self.assertEqual(h.size, desc.total_tensor_size_in_bytes)
        now = time.time() * 1000
        self.assertTrue(now + 20000 < h.expiry <= now + 31000, h.expiry)
        np.testing.assert_array_equal(self.client.download(h),
                                      np.zeros((2, 9), np.float16))

    def test_chunked_upload_and_download_with_progress(self):
        x = random_array((64, 1000), seed=2)  # 256,000 bytes
        sent, received = [], []
        h = self.client.upload(x, chunk_bytes=10000,
                               progress=lambda d, t: sent.append((d, t)))
        self.assertEqual(len(sent), 26)
        self.assertEqual(sent[-1], (256000, 256000))
        y = self.client.download(h, chunk_bytes=30000,
                                 progress=lambda d, t: received.append(d))
        np.testing.assert_array_equal(y, x)
        self.assertEqual(len(received), 9)  # the server's chunks of 30,000
        self.assertEqual(received[-1], 256000)

    def test_overwrite_partial_write_and_partial_read(self):
        x = np.arange(100, dtype=np.int32)
        h = self.client.create_tensor(x)
        self.client.upload(np.arange(100, 200, dtype=np.int32), handle=h,
                           chunk_bytes=64)
        np.testing.assert_array_equal(self.client.download(h),
                                      np.arange(100, 200))
        patch = np.int32([-1, -2, -3]).tobytes()
        self.client.upload(patch, handle=h, offset=40)
        expected = np.arange(100, 200, dtype=np.int32)
        expected[10:13] = [-1, -2, -3]
        np.testing.assert_array_equal(self.client.download(h), expected)
        part = self.client.download(h, offset=36, length=20, chunk_bytes=8)
        self.assertEqual(part, expected[9:14].tobytes())
        tail = self.client.download(h, offset=392)
        self.assertEqual(tail, expected[98:].tobytes())

    def test_bad_create_and_read_requests(self):
        desc = dc.tensor_desc(np.float32, (4,))
        self.assertRejected(
            lambda: self.client._call(
                self.client.tensors.CreateTensor,
                pb.CreateTensorRequest(desc=desc, data=bytes(12)), None),
            INVALID, "CREATE_DATA_SIZE")
        bad = dc.tensor_desc(np.float32, (4,))
        bad.data_type = pb.DATA_TYPE_UNKNOWN
        self.assertRejected(lambda: self.client.create_tensor(bad), INVALID,
                            self._rule_of_bad_desc(bad), field_prefix="desc")
        h = self.client.create_tensor(desc)
        for offset, length in ((17, 0), (8, 9), (16, 1)):
            self.assertRejected(
                lambda: self.client.download(h, offset=offset, length=length),
                INVALID, "READ_RANGE_INVALID")

    def _rule_of_bad_desc(self, desc):
        """The validator's rule for a tensor descriptor, via Validate."""
        op = pb.OperatorDesc()
        op.relu.input.CopyFrom(desc)
        op.relu.output.CopyFrom(dc.tensor_desc(np.float32, (4,)))
        response = self.client.validate(op)
        self.assertFalse(response.valid)
        return response.violations[0].rule

    def test_ttls_beyond_30_days_are_invalid(self):
        # 2^63 and above became the default (3,600 s), 2^63-1 "never".
        x = random_array((2, 2), seed=9)
        month = 30 * 24 * 3600
        for ttl in (month + 1, 1 << 63, (1 << 64) - 1):
            calls = {
                "ttl_seconds": lambda: self.client.create_tensor(x, ttl=ttl),
                "create.ttl_seconds": lambda: self.client.upload(x, ttl=ttl),
                "keep_output_ttl_seconds": lambda: self.client.execute(
                    CELU, x, keep_output=True, keep_output_ttl=ttl),
                "steps[0].keep_output_ttl_seconds": lambda: self.client.chain(
                    [{"op": CELU, "input": x, "keep_output": True,
                      "keep_output_ttl": ttl}]),
            }
            for field, call in calls.items():
                with self.subTest(ttl=ttl, field=field):
                    self.assertRejected(call, INVALID, "TTL_TOO_LONG", field)
        self.assertEqual(self.client.list_tensors().tensors, [])
        h = self.client.create_tensor(x, ttl=month)  # the longest allowed
        self.assertLess(abs(h.expiry - (time.time() + month) * 1000), 60000)
        self.client.release(h)

    def test_tenant_name_rules(self):
        with dc.DmlClient(self.target, tenant="x" * 300) as c:
            self.assertRejected(c.list_tensors, INVALID, "TENANT_INVALID")


class ExecuteWithHandlesTest(RejectionAsserts, ServerTestCase):
    TENANT = "handles"

    def test_handle_in_array_out(self):
        x = random_array((4, 33), seed=3)
        h = self.client.create_tensor(x)
        y = self.client.execute(CELU, h)
        self.assertEqual(ref.mismatches(y, celu_ref(x), np.float32,
                                        "TRANSCENDENTAL"), [])
        np.testing.assert_array_equal(self.client.download(h), x)

    def test_keep_output_and_output_handle(self):
        x = random_array((2, 3, 16), seed=4)
        kept = self.client.execute(CELU, x, keep_output=True)
        self.assertIsInstance(kept, dc.TensorHandle)
        self.assertIn(kept.handle, [t.handle for t in
                                    self.client.list_tensors().tensors])
        y = self.client.download(kept)
        self.assertEqual(ref.mismatches(y, celu_ref(x), np.float32,
                                        "TRANSCENDENTAL"), [])
        # MVN1 of the kept tensor written into an existing one.
        target = self.client.create_tensor(dc.tensor_desc(np.float32,
                                                          (2, 3, 16)))
        out = self.client.execute(mvn1_op([2]), kept, output_handle=target)
        self.assertEqual(out.handle, target.handle)
        z = self.client.download(target)
        self.assertEqual(ref.mismatches(z, ref.mvn(y, [2]), np.float32,
                                        "NORMALIZATION"), [])

    def test_in_place_on_a_handle_updates_it(self):
        x = random_array((5, 6), seed=5)
        h = self.client.create_tensor(x)
        out = self.client.execute(CELU, h, in_place=True)
        self.assertIsInstance(out, dc.TensorHandle)
        self.assertEqual(out.handle, h.handle)
        self.assertEqual(ref.mismatches(self.client.download(h), celu_ref(x),
                                        np.float32, "TRANSCENDENTAL"), [])

    def raw(self, **fields):
        request, _ = dc.build_request(CELU, np.zeros((2, 4), np.float32))
        for key, value in fields.items():
            setattr(request, key, value)
        return lambda: self.client.execute_request(request)

    def test_handle_rules(self):
        h = self.client.create_tensor(np.zeros((2, 4), np.float32))
        small = self.client.create_tensor(np.zeros((3,), np.float32))
        ints = self.client.create_tensor(np.zeros((2, 4), np.int32))
        # Each error names the ExecuteRequest's own field (the builder's
        # and admission's alike), never a chain's "steps[0]...".
        cases = [
            ({"input_handle": h.handle}, "HANDLE_AND_BYTES", "input_handle"),
            ({"input": b"", "input_handle": small.handle},
             "HANDLE_SIZE_MISMATCH", "input_handle"),
            ({"input": b"", "input_handle": ints.handle},
             "HANDLE_TYPE_MISMATCH", "input_handle"),
            ({"output_handle": small.handle}, "OUTPUT_HANDLE_TOO_SMALL",
             "output_handle"),
            ({"output_handle": h.handle, "keep_output": True},
             "OUTPUT_MODE_CONFLICT", "keep_output"),
            ({"input": b"", "input_handle": h.handle,
              "output_handle": h.handle}, "OUTPUT_ALIASES_INPUT", "output_handle"),
            ({"input": b"", "input_handle": h.handle, "in_place": True,
              "output_handle": h.handle}, "OUTPUT_MODE_CONFLICT", "output_handle"),
        ]
        for fields, rule, field in cases:
            with self.subTest(rule=rule, fields=sorted(fields)):
                self.assertRejected(self.raw(**fields), INVALID, rule, field=field)
        for name in ("input_handle", "output_handle"):
            with self.subTest(missing=name):
                fields = {name: "t-" + "f" * 32}
                if name == "input_handle":
                    fields["input"] = b""
                self.assertRejected(self.raw(**fields), NOT_FOUND,
                                    "HANDLE_NOT_FOUND", field=name)
        # A scale or bias for an operator that has none is wrong whatever
        # the handle names.
        for name in ("scale_handle", "bias_handle"):
            with self.subTest(unexpected=name):
                self.assertRejected(self.raw(**{name: "t-" + "f" * 32}),
                                    INVALID, "CHAIN_SOURCE_UNEXPECTED", field=name)


def handle_calls(client, h, x):
    """{name: call} of every call of `client` on the handle `h` (of a
    tensor like `x`)."""
    return {
        "read": lambda: client.download(h),
        "write": lambda: client.upload(x, handle=h),
        "release": lambda: client.release(h),
        "execute": lambda: client.execute(CELU, h),
        "execute output": lambda: client.execute(CELU, x, output_handle=h),
        "chain": lambda: client.chain(
            [{"op": CELU, "input": h, "return_output": True}]),
    }


class OwnershipTest(RejectionAsserts, ServerTestCase):
    """A handle is invisible to every other principal: NOT_FOUND for read,
    write, release, execute and chain, and absent from its listing."""

    def others(self):
        return [dc.DmlClient(self.target, tenant="bob")]

    def check_invisible(self, owner, h, x):
        for other in self.others():
            with other:
                self.assertNotIn(h.handle, [t.handle for t in
                                            other.list_tensors().tensors])
                for name, call in handle_calls(other, h, x).items():
                    with self.subTest(call=name, tenant=other.tenant):
                        self.assertRejected(call, NOT_FOUND,
                                            "HANDLE_NOT_FOUND")
        # Still there and unchanged for its owner.
        np.testing.assert_array_equal(owner.download(h), x)

    def test_another_tenant_cannot_see_or_use_a_handle(self):
        x = random_array((3, 4), seed=6)
        with dc.DmlClient(self.target, tenant="alice") as alice:
            h = alice.create_tensor(x)
            self.check_invisible(alice, h, x)
            alice.release(h)

    def test_no_identity_no_tensors(self):
        # Without a token, a client certificate or a tenant the principal
        # would be the connection's address, the balancer's for every
        # caller behind one (issue 24): every tensor operation is refused,
        # naming the metadata and the flag; a plain Execute still runs.
        x = random_array((3, 4), seed=7)
        with dc.DmlClient(self.target, tenant="dave") as dave, \
                dc.DmlClient(self.target) as nobody:
            h = dave.create_tensor(x)
            calls = handle_calls(nobody, h, x)
            calls["create"] = lambda: nobody.create_tensor(x)
            calls["list"] = nobody.list_tensors
            calls["execute keep_output"] = lambda: nobody.execute(
                CELU, x, keep_output=True)
            for name, call in calls.items():
                with self.subTest(call=name):
                    with self.assertRaises(dc.DmlError) as cm:
                        call()
                    self.assertEqual(cm.exception.code, INVALID, str(cm.exception))
                    self.assertIn("TENANT_REQUIRED: metadata 'tenant'",
                                  cm.exception.message)
                    self.assertIn("--tenant_from_peer", cm.exception.message)
            np.testing.assert_array_equal(
                nobody.execute(CELU, x), dave.execute(CELU, x))
            np.testing.assert_array_equal(dave.download(h), x)
            dave.release(h)

    def test_an_inline_chain_needs_no_identity(self):
        # A chain that names no handle and keeps nothing touches no tensor:
        # it runs without a token, certificate or tenant, as plain Execute
        # does (issue 24: it got TENANT_REQUIRED); a step that keeps its
        # output still gets TENANT_REQUIRED, at that step's field.
        x = random_array((3, 4), seed=9)
        with dc.DmlClient(self.target, tenant="erin") as erin, \
                dc.DmlClient(self.target) as nobody:
            def chain(keep):
                c = dc.Chain()
                a = c.step(CELU, x, return_output=True)
                c.step(CELU, a, return_output=True, keep_output=keep)
                return c
            mine = nobody.chain(chain(False))
            theirs = erin.chain(chain(False))
            self.assertEqual(sorted(mine.arrays), [0, 1])
            for step in (0, 1):
                np.testing.assert_array_equal(mine.arrays[step], theirs.arrays[step])
            with self.assertRaises(dc.DmlError) as cm:
                nobody.chain(chain(True))
            self.assertEqual(cm.exception.code, INVALID, str(cm.exception))
            self.assertEqual(cm.exception.rule, "TENANT_REQUIRED", str(cm.exception))
            self.assertEqual(cm.exception.field, "steps[1].keep_output", str(cm.exception))
            self.assertEqual(nobody.execute(CELU, x).shape, x.shape)


class TenantFromPeerTest(RejectionAsserts, ServerTestCase):
    """--tenant_from_peer (one trusted client): a caller without identity
    is its connection's address, so another channel sees nothing of it."""
    SERVER_ARGS = ("--tenant_from_peer",)

    def test_another_channel_cannot_see_a_channels_handle(self):
        x = random_array((3, 4), seed=7)
        with dc.DmlClient(self.target) as owner:
            h = owner.create_tensor(x)
            OwnershipTest.check_invisible(self, owner, h, x)
            owner.release(h)

    def others(self):
        return [dc.DmlClient(self.target, tenant="bob"),
                dc.DmlClient(self.target)]  # no tenant: a new channel's peer

    def test_same_tenant_on_another_channel_sees_it(self):
        x = random_array((8,), seed=8)
        with dc.DmlClient(self.target, tenant="carol") as a, \
                dc.DmlClient(self.target, tenant="carol") as b:
            h = a.create_tensor(x)
            np.testing.assert_array_equal(b.download(h.handle), x)
            b.release(h)
            self.assertEqual(a.list_tensors().tensors, [])


class ExpiryTest(RejectionAsserts, ServerTestCase):
    SERVER_ARGS = ("--resident_ttl_seconds=1",)

    def test_expired_tensors_are_reclaimed(self):
        with dc.DmlClient(self.target, tenant="expiry") as c:
            short = c.create_tensor(np.ones((256,), np.float32))
            kept = c.execute(CELU, np.ones((8,), np.float32), keep_output=True)
            long = c.create_tensor(np.ones((4,), np.float32), ttl=120)
            now = time.time() * 1000
            self.assertLessEqual(short.expiry, now + 1500)
            self.assertGreater(long.expiry, now + 100000)
            time.sleep(2.5)
            for h in (short, kept):
                self.assertRejected(lambda: c.download(h, offset=0, length=4),
                                    NOT_FOUND, "HANDLE_NOT_FOUND")
                self.assertRejected(lambda: c.execute(CELU, h), NOT_FOUND,
                                    "HANDLE_NOT_FOUND")
            listing = c.list_tensors()
            self.assertEqual([t.handle for t in listing.tensors], [long.handle])
            self.assertEqual(listing.principal_bytes, 16)
            np.testing.assert_array_equal(c.download(long), np.ones(4))

    def test_capabilities_report_the_ttl(self):
        self.assertEqual(self.client.capabilities().limits.resident_ttl_seconds,
                         1)


class QuotaTest(RejectionAsserts, ServerTestCase):
    PER_PRINCIPAL = 1 << 20
    TOTAL = 3 << 20
    # Byte counts with suffixes, as every byte-count flag reads them
    # (server/options/byte_size.h).
    SERVER_ARGS = ("--resident_bytes_per_principal=1M",
                   "--resident_bytes_total=3M")

    def test_limits_are_reported(self):
        limits = self.client.capabilities().limits
        self.assertEqual(limits.resident_bytes_per_principal,
                         self.PER_PRINCIPAL)
        self.assertEqual(limits.resident_bytes_total, self.TOTAL)

    def test_per_principal_quota(self):
        with dc.DmlClient(self.target, tenant="q1") as c:
            a = c.create_tensor(dc.tensor_desc(np.uint8, (768 << 10,)))
            self.assertEqual(c.list_tensors().principal_quota_bytes,
                             self.PER_PRINCIPAL)
            big = np.zeros((512 << 10,), np.uint8)
            floats = np.zeros((128 << 10,), np.float32)  # 512 KiB too
            for call in (
                    lambda: c.create_tensor(dc.tensor_desc(np.uint8,
                                                           (512 << 10,))),
                    lambda: c.upload(big, chunk_bytes=1 << 16),
                    lambda: c.execute({"relu": {}}, floats, keep_output=True)):
                self.assertRejected(call, EXHAUSTED, "RESIDENT_QUOTA")
            self.assertEqual(c.list_tensors().principal_bytes, 768 << 10)
            # Exactly up to the quota is fine; freed bytes can be used again.
            c.create_tensor(dc.tensor_desc(np.uint8, (256 << 10,)))
            c.release(a)
            c.upload(big, chunk_bytes=1 << 16)
            self.assertEqual(c.list_tensors().principal_bytes,
                             (256 + 512) << 10)
            release_all(c)

    def test_server_total_quota(self):
        clients = [dc.DmlClient(self.target, tenant="t%d" % i)
                   for i in range(4)]
        try:
            size = 900 << 10
            for c in clients[:3]:
                c.create_tensor(dc.tensor_desc(np.uint8, (size,)))
            # 2.7 MiB held: 512 KiB more is within q3's quota but not the
            # server's.
            self.assertRejected(
                lambda: clients[3].create_tensor(
                    dc.tensor_desc(np.uint8, (512 << 10,))),
                EXHAUSTED, "RESIDENT_QUOTA")
            for t in clients[0].list_tensors().tensors:
                clients[0].release(t)
            clients[3].create_tensor(dc.tensor_desc(np.uint8, (512 << 10,)))
        finally:
            for c in clients:
                release_all(c)
                c.close()


if __name__ == "__main__":
    unittest.main()
