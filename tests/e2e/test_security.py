"""TLS, mutual TLS and bearer tokens end to end, with certificates made by
openssl at test time: the right credentials work; wrong, missing or expired
ones fail with the right code; plaintext to a TLS port fails cleanly; the
principal comes from the token or the client certificate (not from the
`tenant` metadata), from each call's own token even where calls of several
tokens share one connection; the tokens file reloads on SIGHUP and, polled,
when it changes; dmlctl and the Python client take the TLS and token
options."""

import os
import signal
import subprocess
import tempfile
import time
import unittest

import threading

import grpc
import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import (DMLCTL_CMD, DMLSERVE_CMD, SOURCE_DIR, WINDOWS, Server,
                        health_status)

CELU_JSON = os.path.join(SOURCE_DIR, "client", "examples", "celu.json")
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
NOT_FOUND = grpc.StatusCode.NOT_FOUND
CELU = {"celu": {"alpha": 1.0}}

CA_CONFIG = """
[ca]
default_ca = test_ca
[test_ca]
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
"""


class Pki:
    """A CA, a server certificate for localhost/127.0.0.1, client
    certificates, a second (untrusted) CA's client certificate and an
    expired one, all made with openssl in a temporary directory."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        with open(self.path("ca.cnf"), "w") as f:
            f.write(CA_CONFIG.format(dir=self.dir))
        open(self.path("index.txt"), "w").close()
        with open(self.path("serial"), "w") as f:
            f.write("1000\n")
        self.self_signed("ca", "dmls test CA")
        self.self_signed("other-ca", "someone else's CA")
        self.signed("server", "localhost", "ca",
                    san="DNS:localhost,IP:127.0.0.1")
        self.signed("alice", "alice", "ca")
        self.signed("bob", "bob", "ca")
        self.signed("mallory", "alice", "other-ca")  # alice's name, wrong CA
        self.signed("expired", "alice", "ca",
                    dates=("20200101000000Z", "20200102000000Z"))

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def openssl(self, *args):
        subprocess.run(["openssl"] + list(args), check=True,
                       capture_output=True, cwd=self.dir)

    def self_signed(self, name, cn):
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                     "-subj", "/CN=" + cn, "-keyout", name + ".key",
                     "-out", name + ".pem")

    def signed(self, name, cn, ca, san=None, dates=None):
        req = ["req", "-new", "-newkey", "ec", "-pkeyopt",
               "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=" + cn,
               "-keyout", name + ".key", "-out", name + ".csr"]
        if san:
            req += ["-addext", "subjectAltName=" + san]
        self.openssl(*req)
        sign = ["ca", "-batch", "-config", "ca.cnf", "-cert", ca + ".pem",
                "-keyfile", ca + ".key", "-in", name + ".csr",
                "-out", name + ".pem", "-notext"]
        sign += (["-startdate", dates[0], "-enddate", dates[1]] if dates
                 else ["-days", "2"])
        self.openssl(*sign)


class SecureServerCase(unittest.TestCase):
    """A class with one TLS server; SERVER_FLAGS(pki) gives its flags."""

    CLIENT_CERT = None  # the client certificate the health checks use

    @classmethod
    def server_flags(cls, pki):
        return ["--tls_cert_file=" + pki.path("server.pem"),
                "--tls_key_file=" + pki.path("server.key")]

    @classmethod
    def setUpClass(cls):
        cls.pki = Pki()
        cert = cls.CLIENT_CERT
        cls.server = Server(
            *cls.server_flags(cls.pki),
            credentials=grpc.ssl_channel_credentials(
                root_certificates=cls.pki.read("ca.pem"),
                private_key=cls.pki.read(cert + ".key") if cert else None,
                certificate_chain=cls.pki.read(cert + ".pem") if cert else None),
            channel_options=(("grpc.ssl_target_name_override", "localhost"),)
        ).start()
        cls.target = cls.server.target

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        cls.pki.tmp.cleanup()
        if code != 0:
            raise AssertionError("dmlserve exited with %s\n%s" %
                                 (code, cls.server.stderr()))

    def client(self, cert=None, ca="ca.pem", **kwargs):
        kwargs.setdefault("timeout", 10)
        client = dc.DmlClient(
            self.target, root_certificates=self.pki.path(ca),
            certificate_chain=self.pki.path(cert + ".pem") if cert else None,
            private_key=self.pki.path(cert + ".key") if cert else None,
            server_name="localhost", **kwargs)
        self.addCleanup(client.close)
        return client

    def assertCode(self, code, fn, contains=None):
        with self.assertRaises(dc.DmlError) as ctx:
            fn()
        self.assertEqual(ctx.exception.code, code, str(ctx.exception))
        if contains:
            self.assertIn(contains, str(ctx.exception))
        return ctx.exception

    def dmlctl(self, *args, check=True):
        result = subprocess.run(
            DMLCTL_CMD + ["--server=" + self.target, "--timeout=10"] + list(args),
            capture_output=True, text=True, timeout=60,
            env={k: v for k, v in os.environ.items()
                 if k not in ("DMLS_TOKEN", "DMLS_TENANT")})
        if check:
            self.assertEqual(result.returncode, 0, result.stderr)
        return result


def celu_works(test, client):
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = client.execute_celu(x, alpha=1.0)
    np.testing.assert_allclose(y, np.where(x > 0, x, np.expm1(x)), rtol=1e-5,
                               atol=1e-6)


class TlsTest(SecureServerCase):

    def test_tls_client_works(self):
        client = self.client()
        self.assertGreater(len(client.capabilities().operators), 0)
        celu_works(self, client)

    def test_plaintext_to_a_tls_port_fails_cleanly(self):
        start = time.monotonic()
        client = dc.DmlClient(self.target, timeout=5)
        self.addCleanup(client.close)
        self.assertCode(UNAVAILABLE, client.capabilities)
        self.assertLess(time.monotonic() - start, 5)
        # The server goes on serving TLS clients.
        self.assertGreater(len(self.client().capabilities().operators), 0)

    def test_a_client_that_trusts_another_ca_fails(self):
        self.assertCode(UNAVAILABLE, self.client(ca="other-ca.pem").capabilities)

    def test_dmlctl_with_tls(self):
        ca = "--tls-ca=" + self.pki.path("ca.pem")
        out = tempfile.mktemp(suffix=".npy")
        self.addCleanup(lambda: os.path.exists(out) and os.remove(out))
        self.dmlctl(ca, "--tls-server-name=localhost", "run", CELU_JSON,
                    "--random=1", "--shape=4,4", "--output=" + out)
        self.assertEqual(np.load(out).shape, (4, 4))
        self.assertEqual(self.dmlctl(ca, "--tls-server-name=localhost",
                                     "health").stdout, "SERVING\n")
        plain = self.dmlctl("caps", check=False)
        self.assertEqual(plain.returncode, 1)
        self.assertIn("UNAVAILABLE", plain.stderr)
        missing = self.dmlctl("--tls-ca=/no/such/ca.pem", "caps", check=False)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("cannot read /no/such/ca.pem", missing.stderr)


class MutualTlsTest(SecureServerCase):

    CLIENT_CERT = "alice"

    @classmethod
    def server_flags(cls, pki):
        return super().server_flags(pki) + [
            "--tls_client_ca_file=" + pki.path("ca.pem")]

    def test_a_trusted_client_certificate_works(self):
        celu_works(self, self.client("alice"))

    def test_missing_untrusted_or_expired_certificates_fail(self):
        for cert in (None, "mallory", "expired"):
            with self.subTest(cert=cert):
                self.assertCode(UNAVAILABLE, self.client(cert).capabilities)

    def test_the_certificate_is_the_principal(self):
        alice = self.client("alice")
        bob = self.client("bob")
        # A tenant beside a certificate must be the certificate's own name
        # (it is the balancer's routing key): bob may say "bob", not "alice".
        bob_as_bob = self.client("bob", tenant="bob")
        bob_as_alice = self.client("bob", tenant="alice")
        handle = alice.create_tensor(np.ones((4,), np.float32))
        self.addCleanup(lambda: alice.release(handle))
        self.assertIn(handle.handle,
                      [t.handle for t in alice.list_tensors().tensors])
        for other in (bob, bob_as_bob):
            self.assertEqual(other.list_tensors().tensors, [])
            self.assertCode(grpc.StatusCode.NOT_FOUND,
                            lambda: other.download(handle.handle))
        for call in (bob_as_alice.list_tensors,
                     lambda: bob_as_alice.download(handle.handle)):
            self.assertCode(grpc.StatusCode.INVALID_ARGUMENT, call,
                            contains="TENANT_MISMATCH")
        self.assertEqual(alice.download(handle.handle).tolist(), [1.0] * 4)

    def test_dmlctl_with_a_client_certificate(self):
        tls = ["--tls-ca=" + self.pki.path("ca.pem"), "--tls-server-name=localhost"]
        self.dmlctl(*tls, "--tls-cert=" + self.pki.path("alice.pem"),
                    "--tls-key=" + self.pki.path("alice.key"), "caps")
        self.assertEqual(self.dmlctl(*tls, "caps", check=False).returncode, 1)
        half = self.dmlctl(*tls, "--tls-cert=" + self.pki.path("alice.pem"),
                           "caps", check=False)
        self.assertEqual(half.returncode, 2)


TOKENS = """# tokens of the security e2e test
alice-token-0123456789abcdef  alice
bob-token-0123456789abcdefgh  bob    scopes=execute
old-token-0123456789abcdefgh  carol  expires=2020-01-01T00:00:00Z
carol-token-0123456789abcdef  carol  scopes=tensors
"""
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"  # execute only
CAROL = "carol-token-0123456789abcdef"  # tensors only


def reload_tokens_case(test, sig):
    """A new token works once the file is reloaded, after `sig` (SIGHUP) or,
    when None, by --auth_tokens_poll_ms alone; then a broken file keeps the
    tokens in use, with the error logged."""
    new_token = "dave-token-0123456789abcdefgh"
    test.assertCode(UNAUTHENTICATED, test.client(token=new_token).capabilities)
    test.write_tokens(TOKENS + new_token + " dave\n")
    test.addCleanup(test.write_tokens, TOKENS)
    if sig is not None:
        test.server.process.send_signal(sig)
    deadline = time.monotonic() + 10
    while True:
        try:
            test.client(token=new_token).capabilities()
            break
        except dc.DmlError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    # A broken file keeps the tokens in use.
    test.write_tokens("short dave\n")
    if sig is not None:
        test.server.process.send_signal(sig)
    deadline = time.monotonic() + 10
    while "tokens file line 1" not in test.server.stderr():
        test.assertLess(time.monotonic(), deadline, test.server.stderr())
        time.sleep(0.05)
    test.assertIn("keeping the tokens in use", test.server.stderr())
    test.client(token=new_token).capabilities()
    test.assertEqual(test.server.process.poll(), None)


class TokensFileCase(SecureServerCase):
    """A server with the tokens file TOKENS, polled every POLL_MS (0: not)."""
    POLL_MS = 0

    @classmethod
    def server_flags(cls, pki):
        cls.tokens_path = pki.path("tokens.txt")
        with open(cls.tokens_path, "w") as f:
            f.write(TOKENS)
        return super().server_flags(pki) + [
            "--auth_tokens_file=" + cls.tokens_path,
            "--auth_tokens_poll_ms=%d" % cls.POLL_MS]

    def write_tokens(self, text):
        with open(self.tokens_path, "w") as f:
            f.write(text)


class TokenTest(TokensFileCase):
    # POSIX: the file is reloaded on SIGHUP only, so that the SIGHUP case
    # tests SIGHUP; Windows (no SIGHUP) polls it. TokenPollTest: the poll.
    POLL_MS = 100 if WINDOWS else 0

    def test_the_right_token_works(self):
        celu_works(self, self.client(token="alice-token-0123456789abcdef"))

    def test_missing_wrong_and_expired_tokens_are_unauthenticated(self):
        for token, rule in ((None, "AUTH_TOKEN_MISSING"),
                            ("not-a-token-0123456789abcdef", "AUTH_TOKEN_INVALID"),
                            ("old-token-0123456789abcdefgh", "AUTH_TOKEN_EXPIRED")):
            with self.subTest(token=token):
                client = self.client(token=token)
                self.assertCode(UNAUTHENTICATED, client.capabilities, rule)
                self.assertCode(UNAUTHENTICATED, client.list_tensors, rule)

    def test_a_token_without_the_scope_is_permission_denied(self):
        bob = self.client(token="bob-token-0123456789abcdefgh")
        celu_works(self, bob)  # execute: yes
        self.assertCode(PERMISSION_DENIED, bob.list_tensors, "AUTH_SCOPE")

    def test_health_and_reflection_need_no_token(self):
        creds = grpc.ssl_channel_credentials(root_certificates=self.pki.read("ca.pem"))
        options = (("grpc.ssl_target_name_override", "localhost"),)
        self.assertEqual(health_status(self.target, credentials=creds,
                                       options=options), "SERVING")

    def test_the_token_is_the_principal(self):
        alice = self.client(token="alice-token-0123456789abcdef")
        # A tenant naming alice gets nowhere without alice's token.
        impostor = self.client(token="bob-token-0123456789abcdefgh",
                               tenant="alice")
        handle = alice.create_tensor(np.ones((4,), np.float32))
        self.addCleanup(lambda: alice.release(handle))
        self.assertEqual(
            [t.handle for t in alice.list_tensors().tensors], [handle.handle])
        celu_works(self, impostor)  # bob may execute, as bob
        self.assertCode(PERMISSION_DENIED, impostor.list_tensors)

    def on_connection_of(self, owner, token):
        """A client that sends `token` over `owner`'s channel (one
        connection), as a pooling client library or a proxy that
        multiplexes callers onto one upstream connection does."""
        client = dc.DmlClient(self.target, token=token, timeout=10)
        client.close()  # its own channel, never used; owner's closes later
        client.channel = owner.channel
        client.stub = pb_grpc.DmlServiceStub(owner.channel)
        client.tensors = pb_grpc.TensorServiceStub(owner.channel)
        return client

    def assertInvisible(self, other, handle):
        """`other` neither lists, reads, releases nor executes on `handle`:
        NOT_FOUND, or PERMISSION_DENIED where its token lacks the scope."""
        self.assertNotIn(handle.handle,
                         [t.handle for t in other.list_tensors().tensors])
        self.assertCode(NOT_FOUND, lambda: other.download(handle),
                        "HANDLE_NOT_FOUND")
        self.assertCode(NOT_FOUND, lambda: other.release(handle),
                        "HANDLE_NOT_FOUND")

    def assertNotExecutable(self, other, handle, code):
        self.assertCode(code, lambda: other.execute(CELU, handle))
        self.assertCode(code, lambda: other.chain(
            [{"op": CELU, "input": handle, "return_output": True}]))

    def test_each_call_is_its_own_tokens_principal_on_a_shared_connection(self):
        x = np.linspace(-1, 1, 8, dtype=np.float32)
        alice = self.client(token=ALICE)
        handle = alice.create_tensor(x)  # alice's is the connection's first call
        self.addCleanup(lambda: alice.release(handle))
        carol = self.on_connection_of(alice, CAROL)
        bob = self.on_connection_of(alice, BOB)
        fresh_carol = self.client(token=CAROL)
        fresh_bob = self.client(token=BOB)
        for round_ in range(4):
            with self.subTest(round=round_):
                # On alice's connection, carol and bob get what a connection
                # of their own gets.
                for other in (carol, fresh_carol):
                    self.assertInvisible(other, handle)
                    self.assertNotExecutable(other, handle, PERMISSION_DENIED)
                for other in (bob, fresh_bob):
                    self.assertNotExecutable(other, handle, NOT_FOUND)
                    celu_works(self, other)
                    self.assertCode(PERMISSION_DENIED, other.list_tensors,
                                    "AUTH_SCOPE")
                # Alice, between their calls, still has her tensor.
                self.assertIn(handle.handle,
                              [t.handle for t in alice.list_tensors().tensors])
                np.testing.assert_array_equal(alice.download(handle), x)
                np.testing.assert_allclose(alice.execute(CELU, handle),
                                           np.where(x > 0, x, np.expm1(x)),
                                           rtol=1e-5, atol=1e-6)

    def test_the_first_token_of_a_connection_does_not_stick(self):
        carol = self.client(token=CAROL)
        # (chunk_bytes given: no GetCapabilities, which carol may not call)
        carol_handle = carol.create_tensor(np.ones((4,), np.float32),
                                           chunk_bytes=1 << 16)
        self.addCleanup(lambda: carol.release(carol_handle))
        alice = self.on_connection_of(carol, ALICE)
        alice_handle = alice.create_tensor(np.zeros((4,), np.float32),
                                           chunk_bytes=1 << 16)
        self.addCleanup(lambda: alice.release(alice_handle))
        fresh_alice = self.client(token=ALICE)
        for round_ in range(3):
            with self.subTest(round=round_):
                for client, mine, theirs in (
                        (alice, alice_handle, carol_handle),
                        (fresh_alice, alice_handle, carol_handle),
                        (carol, carol_handle, alice_handle)):
                    listed = [t.handle for t in client.list_tensors().tensors]
                    self.assertIn(mine.handle, listed)
                    self.assertNotIn(theirs.handle, listed)
                self.assertInvisible(alice, carol_handle)
                self.assertInvisible(carol, alice_handle)

    def test_concurrent_calls_of_two_tokens_on_one_connection(self):
        alice = self.client(token=ALICE)
        handle = alice.create_tensor(np.ones((4,), np.float32))
        self.addCleanup(lambda: alice.release(handle))
        carol = self.on_connection_of(alice, CAROL)
        wrong = []

        def calls(client, sees_it):
            for _ in range(25):
                listed = [t.handle for t in client.list_tensors().tensors]
                if (handle.handle in listed) != sees_it:
                    wrong.append(listed)

        threads = [threading.Thread(target=calls, args=(alice, True)),
                   threading.Thread(target=calls, args=(carol, False))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(wrong, [])

    def test_sighup_reloads_the_tokens_file(self):
        # Windows has no SIGHUP (it ends a Wine process): there the server
        # polls the file (server_flags) and the change itself reloads it.
        reload_tokens_case(self, None if WINDOWS else signal.SIGHUP)

    def test_dmlctl_with_a_token(self):
        tls = ["--tls-ca=" + self.pki.path("ca.pem"), "--tls-server-name=localhost"]
        token_file = self.pki.path("alice.token")
        with open(token_file, "w") as f:
            f.write("alice-token-0123456789abcdef\n")
        self.dmlctl(*tls, "--token-file=" + token_file, "caps")
        self.dmlctl(*tls, "--token=alice-token-0123456789abcdef", "ls")
        wrong = self.dmlctl(*tls, "--token=not-a-token-0123456789abcdef",
                            "caps", check=False)
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("UNAUTHENTICATED", wrong.stderr)
        # Health needs no token (the container health check relies on it).
        self.assertEqual(self.dmlctl(*tls, "health").returncode, 0)


class TokenPollTest(TokensFileCase):
    """--auth_tokens_poll_ms: a changed tokens file is reloaded without a
    signal (every platform; the only trigger on Windows)."""
    POLL_MS = 100

    def test_a_changed_tokens_file_is_reloaded_without_a_signal(self):
        reload_tokens_case(self, None)


class StartupTest(unittest.TestCase):

    def start(self, *flags):
        return subprocess.run(DMLSERVE_CMD + ["--device=cpu", "--port=0"] +
                              list(flags), capture_output=True, text=True,
                              timeout=30)

    def test_inconsistent_security_flags_stop_the_server(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as tokens:
            tokens.write("alice-token-0123456789abcdef alice\n")
            tokens.flush()
            cases = (
                (["--auth_tokens_file=" + tokens.name], "needs TLS"),
                (["--tls_cert_file=/no/such.pem"], "go together"),
                (["--tls_cert_file=/no/such.pem", "--tls_key_file=/no/such.key"],
                 "--tls_cert_file: cannot read /no/such.pem"),
                (["--tls_client_ca_file=/x.pem"], "needs --tls_cert_file"),
                (["--tls_cert_file=/no/such.pem", "--tls_key_file=/no/such.key",
                  "--auth_tokens_poll_ms=-1"], "--auth_tokens_poll_ms must be 0"),
            )
            for flags, message in cases:
                with self.subTest(flags=flags):
                    result = self.start(*flags)
                    self.assertEqual(result.returncode, 1, result.stderr)
                    self.assertIn(message, result.stderr)


if __name__ == "__main__":
    unittest.main()
