'use strict';
// Offline tests of lib/layout.js: data types, tensors, descriptor sizes,
// pack/unpack through packed, strided, padded and broadcast layouts, and
// float16 conversion.

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Tensor, tensorDesc, minTensorBytes, packedStrides, pack, unpack, float32ToFloat16,
        float16ToFloat32 } = require('..');

describe('Tensor', () => {
  it('takes its data type from the typed array, or converts numbers', () => {
    assert.equal(new Tensor(new Int8Array(6), [2, 3]).dataType, 'int8');
    assert.equal(new Tensor(new BigInt64Array(2)).dataType, 'int64');
    assert.equal(new Tensor(new Uint16Array(2)).dataType, 'uint16');
    assert.equal(new Tensor(new Uint16Array(2), [2], 'float16').dataType, 'float16');
    const t = new Tensor([1, 2, 3, 4], [2, 2]);
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual(new Tensor([1, 2], [2], 'int32').data, new Int32Array([1, 2]));
    assert.deepEqual(new Tensor([1, -2], [2], 'int64').data, new BigInt64Array([1n, -2n]));
  });

  it('rejects a shape that does not hold the data, and a mismatched array', () => {
    assert.throws(() => new Tensor(new Float32Array(6), [4, 2]), /holds 8 elements, the data 6/);
    assert.throws(() => new Tensor(new Float32Array(2), [2], 'int32'), /int32 data must be a Int32Array/);
    assert.throws(() => new Tensor(new Float32Array(2), [2], 'bfloat16'), /no typed array for data type/);
  });
});

describe('layout', () => {
  it('computes packed strides and DMLCalcBufferTensorSize rounded to 4', () => {
    assert.deepEqual(packedStrides([2, 3, 4]), [12, 4, 1]);
    assert.equal(minTensorBytes('float32', [2, 3]), 24);
    assert.equal(minTensorBytes('float16', [3]), 8);
    assert.equal(minTensorBytes('float32', [2, 3], [1, 2]), 24);
    assert.equal(minTensorBytes('float32', [2, 3], [0, 1]), 12);
    assert.deepEqual(tensorDesc('float16', [3]), {
      data_type: 'DATA_TYPE_FLOAT16', sizes: [3], strides: [], total_tensor_size_in_bytes: 8 });
  });

  it('packs a packed tensor without copying and unpacks it into aligned memory', () => {
    const t = new Tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    const payload = pack(tensorDesc('float32', [2, 3]), t);
    assert.equal(payload.buffer, t.data.buffer);
    const odd = Buffer.alloc(payload.length + 1);
    payload.copy(odd, 1);
    const back = unpack(tensorDesc('float32', [2, 3]), odd.subarray(1));
    assert.deepEqual(back.data, t.data);
    assert.deepEqual(back.shape, [2, 3]);
  });

  it('packs and unpacks transposed, padded and broadcast layouts', () => {
    const t = new Tensor(new Int32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    const transposed = tensorDesc('int32', [2, 3], [1, 2]);
    const payload = pack(transposed, t);
    assert.deepEqual(Array.from(new Int32Array(payload.buffer, payload.byteOffset, 6)), [1, 4, 2, 5, 3, 6]);
    assert.deepEqual(unpack(transposed, payload).data, t.data);
    const padded = tensorDesc('int32', [2, 3], [4, 1]);
    assert.equal(padded.total_tensor_size_in_bytes, 28);
    const p = pack(padded, t);
    assert.deepEqual(Array.from(new Int32Array(p.buffer, p.byteOffset, 7)), [1, 2, 3, 0, 4, 5, 6]);
    assert.deepEqual(unpack(padded, p).data, t.data);
    const row = tensorDesc('int32', [2, 3], [0, 1]);
    assert.deepEqual(unpack(row, Buffer.from(new Int32Array([7, 8, 9]).buffer)).data,
                     new Int32Array([7, 8, 9, 7, 8, 9]));
    const halves = new Tensor(new Uint16Array([1, 2, 3]), [3], 'float16');
    assert.equal(pack(tensorDesc('float16', [3]), halves).length, 8);
  });

  it('rejects mismatched types, sizes and short payloads', () => {
    const t = new Tensor(new Float32Array(4), [4]);
    assert.throws(() => pack(tensorDesc('float16', [4]), t), /the tensor is float32, its descriptor float16/);
    assert.throws(() => pack(tensorDesc('float32', [5]), t), /hold 5 elements/);
    assert.throws(() => unpack(tensorDesc('float32', [4]), Buffer.alloc(12)), /too short/);
  });
});

describe('float16', () => {
  it('converts exactly representable values both ways', () => {
    const values = [0, -0, 1, -2, 0.5, 65504, 2 ** -14, 2 ** -24, Infinity, -Infinity];
    const bits = float32ToFloat16(values);
    assert.deepEqual(Array.from(bits),
                     [0, 0x8000, 0x3c00, 0xc000, 0x3800, 0x7bff, 0x0400, 0x0001, 0x7c00, 0xfc00]);
    assert.deepEqual(Array.from(float16ToFloat32(bits)), values);
    assert.ok(Number.isNaN(float16ToFloat32(float32ToFloat16([NaN]))[0]));
  });

  it('rounds to nearest even, overflows to infinity, underflows to zero', () => {
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1.
    assert.equal(float32ToFloat16([1 + 2 ** -11])[0], 0x3c00);
    assert.equal(float32ToFloat16([1 + 3 * 2 ** -11])[0], 0x3c02);
    assert.equal(float32ToFloat16([65520])[0], 0x7c00);
    assert.equal(float32ToFloat16([2 ** -26])[0], 0);
    assert.equal(float32ToFloat16([3 * 2 ** -25])[0], 0x0002);
  });
});
