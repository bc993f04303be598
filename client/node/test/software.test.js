'use strict';
// The client against the Direct3D 12 engine on the software adapter
// (--device=software: vkd3d over lavapipe, on every machine): an operator,
// a stream and a chain on a resident tensor give the CPU reference's
// results within the operators' tolerances.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { DmlClient, Chain, Tensor, operator } = require('..');
const { startServer, celu, assertClose } = require('./harness');

const X = new Tensor(Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) * 3), [4, 16]);

describe('DmlClient on the software adapter (d3d12)', () => {
  let server;
  let client;

  before(async () => {
    server = await startServer([], 'software');
    // Resident tensors need an identity: the tests name a tenant.
    client = new DmlClient(server.target, { timeoutMs: 60000, tenant: 'node-tests' });
  });

  after(async () => {
    client.close();
    assert.equal(await server.stop(), 0, server.log());
  });

  it('runs CELU on the d3d12 engine', async () => {
    assert.equal((await client.capabilities()).device_kind, 'software');
    const y = await client.executeCelu(X, { alpha: 0.5 });
    assert.match(y.engine, /d3d12/);
    assertClose(assert, y.data, celu(X.data, 0.5), 1e-5);
  });

  it('streams and chains on a resident tensor', async () => {
    const items = [0.5, 1, 2].map((alpha) => ({ op: { celu: { alpha } }, inputs: X }));
    let count = 0;
    for await (const r of client.stream(items)) {
      assert.ok(r.output, String(r.error));
      count++;
    }
    assert.equal(count, 3);
    const h = await client.createTensor(X);
    const chain = new Chain();
    const a = chain.step({ celu: {} }, h);
    chain.step(operator('mvn1', { axes: -1 }), a, { returnOutput: true });
    const r = await client.chain(chain);
    const reference = await client.executeMvn1(await client.executeCelu(X), { axes: [1] });
    assertClose(assert, r.tensors[1].data, reference.data, 1e-4);
    await client.release(h);
  });
});
