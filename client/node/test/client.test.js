'use strict';
// Every RPC of DmlService and TensorService through DmlClient against a
// live dmlserve on the CPU engine: typed arrays in and out, errors with rule
// id and field path, streams as async iterators, chains, resident tensors,
// chunked transfers, tenants, deadlines, cancellation and message sizes.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { DmlClient, Chain, Tensor, TensorHandle, float32ToFloat16, float16ToFloat32, operator } =
  require('..');
const { startServer, rejectsWith, celu, assertClose } = require('./harness');

const X = new Tensor(new Float32Array([-2, -1, -0.5, 0, 0.5, 1, 2, 3]), [2, 4]);

describe('DmlClient on a live server (cpu engine)', () => {
  let server;
  let client;

  before(async () => {
    server = await startServer();
    // Resident tensors need an identity: the tests name a tenant.
    client = new DmlClient(server.target, { timeoutMs: 20000, tenant: 'node-tests' });
  });

  after(async () => {
    client.close();
    assert.equal(await server.stop(), 0, server.log());
  });

  it('GetCapabilities reports the server, its limits and the version of this package', async () => {
    const caps = await client.capabilities();
    assert.equal(caps.device_kind, 'cpu');
    assert.equal(caps.server_version, require('../package.json').version);
    assert.equal(caps.limits.max_message_bytes, 256 * 1024 * 1024);
    assert.ok(caps.operators.some((o) => o.field === 'mvn1'));
    assert.equal((await client.limits()).max_chain_steps, caps.limits.max_chain_steps);
  });

  it('Validate returns every violation with its rule id and field', async () => {
    const ok = await client.validate({ celu: { input: { dataType: 'float32', sizes: [4] },
                                               output: { dataType: 'float32', sizes: [4] } } });
    assert.equal(ok.valid, true, JSON.stringify(ok.violations));
    const bad = await client.validate(operator('mvn1', {
      input: { data_type: 'float32', sizes: [2, 4], total_tensor_size_in_bytes: 32 },
      output: { data_type: 'float32', sizes: [2, 4], total_tensor_size_in_bytes: 32 },
      axes: [1, 1] }));
    assert.equal(bad.valid, false);
    assert.equal(bad.violations[0].rule, 'MVN_AXES_DUPLICATE');
    assert.equal(bad.violations[0].field, 'operator.mvn1.axes[1]');
  });

  it('Execute: float32 in, float32 out, with shape and the response metadata', async () => {
    const y = await client.executeCelu(X, { alpha: 1 });
    assert.ok(y instanceof Tensor);
    assert.ok(y.data instanceof Float32Array);
    assert.deepEqual(y.shape, [2, 4]);
    assert.equal(y.dataType, 'float32');
    assert.equal(y.engine, 'cpu-reference');
    assert.equal(typeof y.serverTimeUs, 'number');
    assertClose(assert, y.data, celu(X.data));
  });

  it('Execute: float16 as Uint16Array bits, and int32 through threshold', async () => {
    const halves = new Tensor(float32ToFloat16(X.data), [2, 4], 'float16');
    const y = await client.executeCelu(halves);
    assert.ok(y.data instanceof Uint16Array);
    assert.equal(y.dataType, 'float16');
    assertClose(assert, y.toFloat32(), celu(X.data), 2e-3);
    const ints = new Tensor(new Int32Array([-3, -1, 0, 2, 7, 9]), [3, 2]);
    const t = await client.executeThreshold(ints, { min: 1 });
    assert.ok(t.data instanceof Int32Array);
    assert.deepEqual(Array.from(t.data), [1, 1, 1, 2, 7, 9]);
  });

  it('Execute: threshold and clip with scale_bias, strided input layout', async () => {
    const t = await client.executeThreshold(X, { min: 0, scaleBias: [2, 1] });
    assertClose(assert, t.data, Array.from(X.data, (x) => Math.max(2 * x + 1, 0)));
    const c = await client.executeClip(X, { min: -1, max: 1 }, { inputStrides: [1, 2] });
    // The input is read through strides [1, 2]: element (i, j) at i + 2j.
    const expected = [];
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 4; j++) expected.push(Math.min(1, Math.max(-1, X.data[i * 4 + j])));
    }
    assertClose(assert, c.data, expected);
  });

  it('Execute: MVN1 over a negative axis with scale, bias and a fused activation', async () => {
    const scale = new Tensor(new Float32Array([2, 2, 2, 2]), [1, 4]);
    const bias = new Tensor(new Float32Array([1, 1, 1, 1]), [1, 4]);
    const y = await client.executeMvn1(X, { axes: -1, scale, bias, fused: 'relu' });
    for (let row = 0; row < 2; row++) {
      const xs = X.data.slice(row * 4, row * 4 + 4);
      const mean = xs.reduce((a, b) => a + b) / 4;
      const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / 4;
      const expected = Array.from(xs, (v) => Math.max(0, (v - mean) / Math.sqrt(variance + 1e-5) * 2 + 1));
      assertClose(assert, y.data.slice(row * 4, row * 4 + 4), expected, 1e-4);
    }
  });

  it('Execute: a bad request is INVALID_ARGUMENT with rule id and field path', async () => {
    const error = await rejectsWith(assert, client.executeMvn1(X, { axes: [2] }), 'INVALID_ARGUMENT',
                                    'MVN_AXIS_OUT_OF_RANGE', 'operator.mvn1.axes[0]');
    assert.equal(error.code, 3);
    assert.match(error.message, /MVN_AXIS_OUT_OF_RANGE/);
    // A misspelt field never leaves the client.
    await assert.rejects(client.execute({ celu: { alpah: 1 } }, X),
                         /unknown field "alpah" of ActivationCelu at operator\.celu\.alpah/);
  });

  it('ExecuteStream: an async iterator of results, one failure does not end it', async () => {
    async function* items() {
      for (let i = 0; i < 6; i++) yield { op: { celu: { alpha: 1 + i } }, inputs: X };
      yield { op: { mvn1: { axes: [7] } }, inputs: X, requestId: 100 };
    }
    const results = new Map();
    for await (const r of client.stream(items())) results.set(r.requestId, r);
    assert.equal(results.size, 7);
    const failed = results.get(100);
    assert.equal(failed.error.codeName, 'INVALID_ARGUMENT');
    assert.equal(failed.error.rule, 'MVN_AXIS_OUT_OF_RANGE');
    assert.equal(failed.error.field, 'operator.mvn1.axes[0]');
    const ok = [...results.values()].filter((r) => r.output);
    assert.equal(ok.length, 6);
    for (const r of ok) {
      const alpha = 1 + [...results.keys()].sort((a, b) => a - b).indexOf(r.requestId);
      assertClose(assert, r.output.data, celu(X.data, alpha));
      assert.equal(r.output.requestId, r.requestId);
    }
    // The raw form: ExecuteRequest messages in, ExecuteResponse messages out.
    const raw = [];
    for await (const r of client.streamRequests([{ request_id: 5, operator: { relu: {
      input: { data_type: 'DATA_TYPE_FLOAT32', sizes: [2], total_tensor_size_in_bytes: 8 },
      output: { data_type: 'DATA_TYPE_FLOAT32', sizes: [2], total_tensor_size_in_bytes: 8 } } },
      input: Buffer.from(new Float32Array([-1, 1]).buffer) }])) raw.push(r);
    assert.equal(raw.length, 1);
    assert.equal(raw[0].request_id, 5);
    assert.deepEqual(Array.from(new Float32Array(new Uint8Array(raw[0].output).buffer)), [0, 1]);
  });

  it('ExecuteStream: leaving the loop early cancels the stream', async () => {
    const many = Array.from({ length: 50 }, () => ({ op: { celu: {} }, inputs: X }));
    let seen = 0;
    for await (const r of client.stream(many)) {
      assert.ok(r.output);
      if (++seen === 2) break;
    }
    assert.equal(seen, 2);
    assertClose(assert, (await client.executeCelu(X)).data, celu(X.data));
  });

  it('Execute in place: the output bound over the input', async () => {
    const y = await client.executeCelu(X, {}, { inPlace: true });
    assertClose(assert, y.data, celu(X.data));
    const h = await client.createTensor(X);
    const same = await client.executeCelu(h, {}, { inPlace: true });
    assert.equal(same.handle, h.handle);
    assertClose(assert, (await client.download(h)).data, celu(X.data));
    await client.release(h);
  });

  it('ExecuteStream: a bad item fails the iterator locally', async () => {
    const run = async () => {
      for await (const r of client.stream([{ op: { celu: {} }, inputs: X },
                                            { op: { nosuch: {} }, inputs: X }])) void r;
    };
    await assert.rejects(run, /unknown field "nosuch" of OperatorDesc/);
  });

  it('ExecuteChain: three steps, intermediates on the device, one output kept', async () => {
    const chain = new Chain();
    const a = chain.step({ celu: { alpha: 1 } }, X);
    const b = chain.step(operator('mvn1', { axes: -1 }), a, { keepOutput: true });
    chain.step({ threshold: { min: 0 } }, b, { returnOutput: true });
    const r = await client.chain(chain);
    assert.deepEqual(Object.keys(r.tensors), ['2']);
    assert.ok(r.handles[1] instanceof TensorHandle);
    const normalised = await client.download(r.handles[1]);
    assertClose(assert, r.tensors[2].data, Array.from(normalised.data, (v) => Math.max(v, 0)));
    const direct = await client.executeMvn1(await client.executeCelu(X), { axes: [1] });
    assertClose(assert, normalised.data, direct.data, 1e-5);
    await client.release(r.handles[1]);
    await rejectsWith(assert, client.chain([{ op: { celu: {} }, input: X },
                                            { op: { relu: { input: { dataType: 'float32', sizes: [2, 4] } } },
                                              input: 5, returnOutput: true }]),
                      'INVALID_ARGUMENT', undefined, 'steps[1].input.step');
  });

  it('TensorService: create, write in chunks, list, read, execute on handles, release', async () => {
    const big = new Tensor(Float32Array.from({ length: 1000 }, (_, i) => i / 100 - 5), [10, 100]);
    const progress = [];
    const h = await client.upload(big, { chunkBytes: 1024, onProgress: (n, t) => progress.push([n, t]) });
    assert.equal(progress.length, 4);
    assert.deepEqual(progress.at(-1), [4000, 4000]);
    assert.equal(h.size, 4000);
    const zeros = await client.createTensor({ dataType: 'float32', sizes: [10, 100] });
    const listed = await client.listTensors();
    assert.ok(listed.tensors.some((t) => t.handle === h.handle));
    assert.ok(listed.principalBytes >= 8000);
    assert.deepEqual(Array.from((await client.download(h.handle, { chunkBytes: 512 })).data), Array.from(big.data));
    const partial = await client.download(h, { offset: 8, length: 8 });
    assert.deepEqual(Array.from(new Float32Array(new Uint8Array(partial).buffer)), [big.data[2], big.data[3]]);
    // Execute reads the handle and writes into another resident tensor.
    const out = await client.executeCelu(h, {}, { outputHandle: zeros });
    assert.equal(out, zeros);
    assertClose(assert, (await client.download(zeros)).data, celu(big.data));
    const kept = await client.executeCelu(X, {}, { keepOutput: true });
    assert.ok(kept instanceof TensorHandle);
    assertClose(assert, (await client.download(kept)).data, celu(X.data));
    // Overwrite part of a tensor, then read it back.
    await client.upload(Buffer.from(new Float32Array([42, 43]).buffer), { handle: h, offset: 4 });
    assert.deepEqual(Array.from((await client.download(h)).data.slice(0, 4)), [big.data[0], 42, 43, big.data[3]]);
    for (const t of [h, zeros, kept]) await client.release(t);
    await rejectsWith(assert, client.download(h), 'NOT_FOUND', 'HANDLE_NOT_FOUND');
    await rejectsWith(assert, client.release(h), 'NOT_FOUND', 'HANDLE_NOT_FOUND');
  });

  it('ExecuteChunked: tensors up and down in small chunks', async () => {
    const x = new Tensor(Float32Array.from({ length: 3000 }, (_, i) => Math.sin(i)), [3, 1000]);
    let sent = 0;
    let received = 0;
    const y = await client.executeChunked({ celu: { alpha: 0.5 } }, x, {
      chunkBytes: 1000, responseChunkBytes: 4096,
      onProgress: (n) => { sent = n; }, onDownloadProgress: (n) => { received = n; } });
    assert.equal(sent, 12000);
    assert.equal(received, 12000);
    assertClose(assert, y.data, celu(x.data, 0.5));
    assert.equal(y.engine, 'cpu-reference');
  });

  it('the tenant owns resident tensors', async () => {
    const alice = new DmlClient(server.target, { tenant: 'alice' });
    const alice2 = new DmlClient(server.target, { tenant: 'alice' });
    const bob = new DmlClient(server.target, { tenant: 'bob' });
    try {
      const h = await alice.createTensor(X);
      assert.deepEqual(Array.from((await alice2.download(h)).data), Array.from(X.data));
      await rejectsWith(assert, bob.download(h), 'NOT_FOUND', 'HANDLE_NOT_FOUND');
      // A per-call tenant overrides the client's.
      assert.ok((await bob.listTensors({ tenant: 'alice' })).tensors.some((t) => t.handle === h.handle));
      await alice.release(h);
    } finally {
      for (const c of [alice, alice2, bob]) c.close();
    }
  });

  it('runs examples/hello.mjs (the README example, as an ES module)', () => {
    const out = execFileSync(process.execPath, [path.join(__dirname, '..', 'examples', 'hello.mjs'),
                                                server.target], { encoding: 'utf8' });
    assert.match(out, /^\[ 8, 1024 \] Float32Array\(3\)/);
    assert.match(out, /cpu-reference \d+ us/);
    assert.match(out, /INVALID_ARGUMENT MVN_AXIS_OUT_OF_RANGE operator\.mvn1\.axes\[0\]/);
  });

  it("runs the repository README's Node.js example, installed as a package", () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    const block = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
      .find((code) => code.includes("from 'dmlserve-client'"));
    assert.ok(block, "README.md has a js block importing 'dmlserve-client'");
    assert.ok(block.includes("'127.0.0.1:50051'"));
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'dmls-node-readme-'));
    try {
      fs.mkdirSync(path.join(app, 'node_modules'));
      fs.symlinkSync(path.join(__dirname, '..'), path.join(app, 'node_modules', 'dmlserve-client'));
      fs.writeFileSync(path.join(app, 'readme.mjs'), block.replace("'127.0.0.1:50051'",
                                                                   `'${server.target}'`));
      const out = execFileSync(process.execPath, ['readme.mjs'], { cwd: app, encoding: 'utf8' });
      assert.match(out, /\[ 8, 1024 \] Float32Array\(3\)/);
      assert.match(out, /MVN_AXIS_OUT_OF_RANGE operator\.mvn1\.axes\[0\]/);
    } finally {
      fs.rmSync(app, { recursive: true, force: true });
    }
  });

  it('deadlines, cancellation and the message size limit', async () => {
    await rejectsWith(assert, client.executeCelu(X, {}, { deadline: new Date(Date.now() - 1) }),
                      'DEADLINE_EXCEEDED');
    const controller = new AbortController();
    controller.abort();
    await rejectsWith(assert, client.capabilities({ signal: controller.signal }), 'CANCELLED');
    const small = new DmlClient(server.target, { maxMessageBytes: 4096 });
    try {
      const x = new Tensor(new Float32Array(2048), [2048]);
      await rejectsWith(assert, small.executeCelu(x), 'RESOURCE_EXHAUSTED');
      // Chunked transfers fit any message size.
      const y = await small.executeChunked({ celu: {} }, x, { chunkBytes: 1024, responseChunkBytes: 1024 });
      assert.equal(y.size, 2048);
    } finally {
      small.close();
    }
  });
});
