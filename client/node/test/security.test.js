'use strict';
// TLS, mutual TLS and bearer tokens against live servers with certificates
// made by openssl at test time (as tests/e2e/test_security.py does): the
// right credentials work, missing or wrong ones fail with the right code and
// rule id, a per-call token overrides the client's.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { DmlClient, Tensor } = require('..');
const { startServer, Pki, rejectsWith, celu, assertClose } = require('./harness');

const X = new Tensor(new Float32Array([-1, 0, 1, 2]), [4]);
const TOKENS = `alice-token-0123456789abcdef alice
bob-token-0123456789abcdefgh bob scopes=execute
`;

const pki = new Pki();
after(() => pki.cleanup());

describe('TLS and bearer tokens', () => {
  let server;
  const clients = [];

  // A client of `server` trusting the test CA, closed after the suite.
  function client(options = {}) {
    const tls = options.tls === false ? false
      : { rootCerts: pki.path('ca.pem'), serverName: 'localhost', ...(options.tls || {}) };
    const c = new DmlClient(server.target, { timeoutMs: 10000, ...options, tls });
    clients.push(c);
    return c;
  }

  before(async () => {
    require('fs').writeFileSync(pki.path('tokens.txt'), TOKENS);
    server = await startServer([`--tls_cert_file=${pki.path('server.pem')}`,
                                `--tls_key_file=${pki.path('server.key')}`,
                                `--auth_tokens_file=${pki.path('tokens.txt')}`]);
  });

  after(async () => {
    for (const c of clients) c.close();
    assert.equal(await server.stop(), 0, server.log());
  });

  it('the right token works over TLS', async () => {
    const y = await client({ token: 'alice-token-0123456789abcdef' }).executeCelu(X);
    assertClose(assert, y.data, celu(X.data));
  });

  it('missing and wrong tokens are UNAUTHENTICATED with their rule', async () => {
    await rejectsWith(assert, client().capabilities(), 'UNAUTHENTICATED', 'AUTH_TOKEN_MISSING');
    await rejectsWith(assert, client({ token: 'not-a-token-0123456789abcdef' }).executeCelu(X),
                      'UNAUTHENTICATED', 'AUTH_TOKEN_INVALID');
  });

  it("a per-call token overrides the client's; scopes are enforced", async () => {
    const bob = client({ token: 'bob-token-0123456789abcdefgh' });
    await bob.executeCelu(X);  // execute: in bob's scopes
    await rejectsWith(assert, bob.listTensors(), 'PERMISSION_DENIED', 'AUTH_SCOPE');
    const listed = await bob.listTensors({ token: 'alice-token-0123456789abcdef' });
    assert.deepEqual(listed.tensors, []);
  });

  it('serverName names the certificate; a wrong CA or plaintext fails', async () => {
    const named = client({ token: 'alice-token-0123456789abcdef',
                           tls: { serverName: 'not-the-server' } });
    await rejectsWith(assert, named.capabilities({ timeoutMs: 3000 }), 'UNAVAILABLE');
    const wrongCa = client({ token: 'alice-token-0123456789abcdef',
                             tls: { rootCerts: pki.read('other-ca.pem') } });
    await rejectsWith(assert, wrongCa.capabilities({ timeoutMs: 3000 }), 'UNAVAILABLE');
    const plain = client({ tls: false, token: 'alice-token-0123456789abcdef' });
    const error = await (async () => {
      try { await plain.capabilities({ timeoutMs: 3000 }); } catch (e) { return e; }
      return null;
    })();
    assert.ok(error && ['UNAVAILABLE', 'INTERNAL'].includes(error.codeName), String(error));
  });
});

describe('mutual TLS', () => {
  let server;

  before(async () => {
    server = await startServer([`--tls_cert_file=${pki.path('server.pem')}`,
                                `--tls_key_file=${pki.path('server.key')}`,
                                `--tls_client_ca_file=${pki.path('ca.pem')}`]);
  });

  after(async () => {
    assert.equal(await server.stop(), 0, server.log());
  });

  async function withClient(tls, fn) {
    const c = new DmlClient(server.target, {
      timeoutMs: 5000, tls: { rootCerts: pki.path('ca.pem'), serverName: 'localhost', ...tls } });
    try { return await fn(c); } finally { c.close(); }
  }

  it("a client certificate of the server's CA works, as file paths or PEM", async () => {
    await withClient({ certChain: pki.path('alice.pem'), privateKey: pki.path('alice.key') },
                     async (c) => assertClose(assert, (await c.executeCelu(X)).data, celu(X.data)));
    await withClient({ certChain: pki.read('alice.pem'), privateKey: pki.read('alice.key') },
                     async (c) => assert.equal((await c.capabilities()).device_kind, 'cpu'));
  });

  it("no certificate, or one of another CA, gets no connection", async () => {
    await withClient({}, (c) => rejectsWith(assert, c.capabilities(), 'UNAVAILABLE'));
    await withClient({ certChain: pki.path('mallory.pem'), privateKey: pki.path('mallory.key') },
                     (c) => rejectsWith(assert, c.capabilities(), 'UNAVAILABLE'));
    assert.throws(() => new DmlClient(server.target, { tls: { certChain: pki.path('alice.pem') } }),
                  /certChain and tls.privateKey go together/);
  });
});
