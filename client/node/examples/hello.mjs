// MVN over the last axis, then CELU, of an 8 x 1024 float32 tensor on a
// dmlserve at the address in argv[2] (default 127.0.0.1:50051).
import { DmlClient, Tensor } from 'dmlserve-client';

const client = new DmlClient(process.argv[2] ?? '127.0.0.1:50051');
const x = new Tensor(Float32Array.from({ length: 8 * 1024 }, Math.random), [8, 1024]);
const y = await client.executeMvn1(x, { axes: -1, fused: 'celu' });
console.log(y.shape, y.data.slice(0, 3), y.engine, `${y.serverTimeUs} us`);
try {
  await client.executeMvn1(x, { axes: [2] });
} catch (e) {
  console.log(e.codeName, e.rule, e.field);  // INVALID_ARGUMENT MVN_AXIS_OUT_OF_RANGE operator.mvn1.axes[0]
}
client.close();
