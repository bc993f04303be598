// Compiled (never run) by test/types.test.js with tsc --strict: the API as
// a TypeScript user writes it must type-check against index.d.ts, and the
// lines marked @ts-expect-error must not.
import { Chain, DmlClient, DmlError, Tensor, TensorHandle, float32ToFloat16, operator, status }
  from 'dmlserve-client';
import type { ResultTensor, StreamItem, StreamResult } from 'dmlserve-client';

async function main(): Promise<void> {
  const client = new DmlClient('127.0.0.1:50051', {
    tls: { rootCerts: 'ca.pem', serverName: 'localhost' }, token: 't', tenant: 'a', timeoutMs: 1000,
  });
  const x = new Tensor(new Float32Array(8), [2, 4]);
  const halves = new Tensor(float32ToFloat16([1, 2]), [2], 'float16');
  const y = await client.executeMvn1(x, { axes: -1, fused: ['celu', { alpha: 1 }] });
  if (y instanceof Tensor) {
    const data: Float32Array = y.toFloat32();
    const engine: string = y.engine;
    void data; void engine;
  }
  await client.executeCelu(halves, { alpha: 0.5 }, { signal: new AbortController().signal });
  await client.executeThreshold(x, { min: 0, scaleBias: [2, 1] }, { inputStrides: [1, 2] });
  const caps = await client.capabilities();
  const maxMessage: number = caps.limits.max_message_bytes;
  const kinds: string[] = caps.operators.map((o) => o.field);
  void maxMessage; void kinds;
  // @ts-expect-error: limits are numbers
  const wrong: string = (await client.limits()).max_chain_steps;
  void wrong;
  const v = await client.validate({ celu: { alpha: 1 } });
  if (!v.valid) console.log(v.violations[0].rule, v.violations[0].field);
  const items: StreamItem[] = [{ op: operator('celu'), inputs: x, requestId: 1 }];
  for await (const r of client.stream(items)) {
    const result: StreamResult = r;
    if (result.error) console.log(result.error.rule, result.error.field, result.error.code === status.INVALID_ARGUMENT);
    else console.log(result.output);
  }
  const chain = new Chain();
  const a = chain.step({ celu: {} }, x);
  chain.step(operator('mvn1', { axes: [1] }), a, { returnOutput: true });
  const r = await client.chain(chain);
  // On tensors, without keepOutput or outputHandle: a Tensor; otherwise a handle.
  const t: ResultTensor = await client.executeCelu(x);
  const kept: TensorHandle = await client.execute({ celu: {} }, x, { keepOutput: true });
  const whole: Tensor = await client.download(kept);
  void t; void whole;
  // @ts-expect-error: a kept output is no Tensor
  const notTensor: ResultTensor = await client.executeCelu(x, {}, { keepOutput: true });
  void notTensor;
  console.log(r.tensors[1].shape, r.serverTimeUs);
  const h: TensorHandle = await client.createTensor(x, { ttlSeconds: 60 });
  await client.upload(Buffer.alloc(8), { handle: h, offset: 0, chunkBytes: 4 });
  const back = await client.download(h, { onProgress: (n, total) => console.log(n, total) });
  console.log(back);
  const listed = await client.listTensors();
  console.log(listed.tensors.length, listed.principalBytes);
  await client.release(h.handle);
  await client.executeChunked({ relu: {} }, x, { chunkBytes: 1024, responseChunkBytes: 1024 });
  try {
    await client.execute({ relu: {} }, { input: h, scale: x });
  } catch (e) {
    if (e instanceof DmlError) console.log(e.codeName, e.violations.length);
  }
  // @ts-expect-error: a tensor's shape is a list of numbers
  new Tensor(new Float32Array(2), '2');
  // @ts-expect-error: threshold needs its min
  await client.executeThreshold(x, {});
  client.close();
}
void main;
