'use strict';
// Tensors and their buffer layouts: typed arrays with a shape, the data types
// of dmlserve.v1, and pack/unpack between a logical C-order tensor and the
// raw buffer range of a TensorDesc. A TensorDesc's payload is the
// little-endian bytes of its buffer range, total_tensor_size_in_bytes long,
// with the element at logical index (i0..in-1) at element offset
// sum_k(ik * strides[k]) (proto/dmlserve/v1/dmlserve.proto), so packed,
// strided, padded and zero-stride (broadcast) layouts all go through here.
// Pure functions and a value class; no gRPC. Typed arrays use the host's byte
// order, which is little-endian on every platform Node.js runs on.

/** One row per data type the client can hold in a typed array. float16 is
 * carried as its raw bits in a Uint16Array (float16ToFloat32 converts). */
const DATA_TYPES = [
  { name: 'float32', proto: 'DATA_TYPE_FLOAT32', value: 1, bytes: 4, Array: Float32Array },
  { name: 'float16', proto: 'DATA_TYPE_FLOAT16', value: 2, bytes: 2, Array: Uint16Array },
  { name: 'uint32', proto: 'DATA_TYPE_UINT32', value: 3, bytes: 4, Array: Uint32Array },
  { name: 'uint16', proto: 'DATA_TYPE_UINT16', value: 4, bytes: 2, Array: Uint16Array },
  { name: 'uint8', proto: 'DATA_TYPE_UINT8', value: 5, bytes: 1, Array: Uint8Array },
  { name: 'int32', proto: 'DATA_TYPE_INT32', value: 6, bytes: 4, Array: Int32Array },
  { name: 'int16', proto: 'DATA_TYPE_INT16', value: 7, bytes: 2, Array: Int16Array },
  { name: 'int8', proto: 'DATA_TYPE_INT8', value: 8, bytes: 1, Array: Int8Array },
  { name: 'float64', proto: 'DATA_TYPE_FLOAT64', value: 9, bytes: 8, Array: Float64Array },
  { name: 'uint64', proto: 'DATA_TYPE_UINT64', value: 10, bytes: 8, Array: BigUint64Array },
  { name: 'int64', proto: 'DATA_TYPE_INT64', value: 11, bytes: 8, Array: BigInt64Array },
];

/** The DATA_TYPES row of a name ('float32'), proto enum name
 * ('DATA_TYPE_FLOAT32') or enum value (1); throws TypeError otherwise. */
function dataTypeInfo(dataType) {
  const key = typeof dataType === 'string' ? dataType.toLowerCase() : dataType;
  const row = DATA_TYPES.find((t) => t.name === key || t.proto.toLowerCase() === key ||
                                    t.value === key);
  if (!row) {
    throw new TypeError(`no typed array for data type ${JSON.stringify(dataType)} ` +
                        `(known: ${DATA_TYPES.map((t) => t.name).join(', ')})`);
  }
  return row;
}

/** The data type a typed array holds by default (Uint16Array: uint16; pass
 * 'float16' explicitly for half floats). */
function dataTypeOfArray(data) {
  const row = DATA_TYPES.find((t) => data instanceof t.Array && t.name !== 'float16');
  if (!row) throw new TypeError('expected a typed array, got ' + describe(data));
  return row.name;
}

function describe(value) {
  if (value === null || value === undefined) return String(value);
  return value.constructor ? value.constructor.name : typeof value;
}

function product(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

/** A tensor: a typed array of its elements in C order, its shape and its
 * data type. Results also carry engine, serverTimeUs and requestId. */
class Tensor {
  /**
   * @param {ArrayLike<number|bigint>} data typed array, or numbers to copy
   *   into the data type's array class
   * @param {number[]} [shape] defaults to [data.length]
   * @param {string} [dataType] defaults to the typed array's ('float32' for
   *   plain arrays)
   */
  constructor(data, shape, dataType) {
    const type = dataType !== undefined ? dataTypeInfo(dataType)
      : dataTypeInfo(ArrayBuffer.isView(data) ? dataTypeOfArray(data) : 'float32');
    if (!(data instanceof type.Array)) {
      if (ArrayBuffer.isView(data)) {
        throw new TypeError(`${type.name} data must be a ${type.Array.name}, got ` +
                            describe(data));
      }
      // BigInt64Array / BigUint64Array take BigInts; numbers are converted.
      const big = type.Array === BigInt64Array || type.Array === BigUint64Array;
      data = big ? type.Array.from(data, BigInt) : type.Array.from(data);
    }
    this.data = data;
    this.shape = shape === undefined ? [data.length] : Array.from(shape, Number);
    this.dataType = type.name;
    if (this.shape.some((s) => !Number.isInteger(s) || s < 0)) {
      throw new RangeError(`shape [${this.shape}] must hold non-negative integers`);
    }
    if (product(this.shape) !== data.length) {
      throw new RangeError(`shape [${this.shape}] holds ${product(this.shape)} elements, ` +
                           `the data ${data.length}`);
    }
  }

  /** Element count. */
  get size() { return this.data.length; }

  /** The elements as a Float32Array (float16 bits decoded). */
  toFloat32() {
    if (this.dataType === 'float16') return float16ToFloat32(this.data);
    return Float32Array.from(this.data, Number);
  }
}

/** A Tensor from a Tensor, a typed array (1-D) or {data, shape, dataType}. */
function asTensor(value) {
  if (value instanceof Tensor) return value;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return new Tensor(value);
  if (value && typeof value === 'object' && 'data' in value) {
    return new Tensor(value.data, value.shape, value.dataType);
  }
  throw new TypeError('expected a Tensor, a typed array or {data, shape, dataType}, got ' +
                      describe(value));
}

function isTensorLike(value) {
  return value instanceof Tensor ||
    (ArrayBuffer.isView(value) && !(value instanceof DataView)) ||
    (value !== null && typeof value === 'object' && 'data' in value && 'shape' in value);
}

/** Row-major element strides of a shape. */
function packedStrides(shape) {
  const strides = new Array(shape.length).fill(1);
  for (let k = shape.length - 2; k >= 0; k--) strides[k] = strides[k + 1] * shape[k + 1];
  return strides;
}

/** DMLCalcBufferTensorSize rounded up to 4 bytes (OPERATORS.md 2.4). */
function minTensorBytes(dataType, sizes, strides) {
  const bytes = dataTypeInfo(dataType).bytes;
  let elements;
  if (strides && strides.length) {
    elements = sizes.reduce((acc, s, k) => acc + (Number(s) - 1) * Number(strides[k]), 0) + 1;
  } else {
    elements = product(sizes.map(Number));
  }
  return Math.ceil((elements * bytes) / 4) * 4;
}

/** A TensorDesc message (snake_case, as the proto) of a data type and shape;
 * the total size defaults to the minimum. */
function tensorDesc(dataType, shape, strides, total) {
  const type = dataTypeInfo(dataType);
  const sizes = Array.from(shape, Number);
  const st = strides ? Array.from(strides, Number) : [];
  return {
    data_type: type.proto,
    sizes,
    strides: st,
    total_tensor_size_in_bytes: total !== undefined ? Number(total)
      : minTensorBytes(type.name, sizes, st),
  };
}

function effectiveStrides(sizes, strides) {
  return strides && strides.length ? strides.map(Number) : packedStrides(sizes);
}

// Calls visit(logicalIndex, elementOffset) for every element in C order.
function forEachElement(sizes, strides, visit) {
  const rank = sizes.length;
  const count = product(sizes);
  const index = new Array(rank).fill(0);
  let offset = 0;
  for (let i = 0; i < count; i++) {
    visit(i, offset);
    for (let k = rank - 1; k >= 0; k--) {
      index[k]++;
      offset += strides[k];
      if (index[k] < sizes[k]) break;
      offset -= strides[k] * sizes[k];
      index[k] = 0;
    }
  }
}

function isPacked(sizes, strides) {
  const packed = packedStrides(sizes);
  return strides.every((s, k) => s === packed[k] || sizes[k] === 1);
}

/** The payload (a Buffer of total_tensor_size_in_bytes) of `desc` holding the
 * logical tensor. Packed layouts of the exact size share the tensor's memory. */
function pack(desc, tensor) {
  const t = asTensor(tensor);
  const type = dataTypeInfo(desc.data_type);
  if (type.name !== t.dataType) {
    throw new TypeError(`the tensor is ${t.dataType}, its descriptor ${type.name}`);
  }
  const sizes = desc.sizes.map(Number);
  if (product(sizes) !== t.size) {
    throw new RangeError(`descriptor sizes [${sizes}] hold ${product(sizes)} elements, ` +
                         `the tensor [${t.shape}] ${t.size}`);
  }
  const total = Number(desc.total_tensor_size_in_bytes);
  const strides = effectiveStrides(sizes, desc.strides);
  const data = t.data;
  if (isPacked(sizes, strides) && total === data.byteLength) {
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
  const buffer = new ArrayBuffer(total);
  const view = new type.Array(buffer, 0, Math.floor(total / type.bytes));
  forEachElement(sizes, strides, (i, offset) => {
    if (offset >= view.length) {
      throw new RangeError(`element ${i} lies past total_tensor_size_in_bytes ${total}`);
    }
    view[offset] = data[i];  // zero strides: the last write of an offset wins
  });
  return Buffer.from(buffer);
}

/** The logical Tensor of `desc` read out of its buffer bytes (copied, so the
 * result owns aligned memory). */
function unpack(desc, payload) {
  const type = dataTypeInfo(desc.data_type);
  const sizes = desc.sizes.map(Number);
  const strides = effectiveStrides(sizes, desc.strides);
  const count = product(sizes);
  const last = count === 0 ? -1 : sizes.reduce((acc, s, k) => acc + (s - 1) * strides[k], 0);
  if (payload.length < (last + 1) * type.bytes) {
    throw new RangeError(`payload of ${payload.length} bytes is too short for the layout ` +
                         `(${(last + 1) * type.bytes} needed)`);
  }
  const span = (last + 1) * type.bytes;
  const bytes = new Uint8Array(span);
  bytes.set(payload.subarray(0, span));
  const flat = new type.Array(bytes.buffer, 0, last + 1);
  if (isPacked(sizes, strides)) return new Tensor(flat.subarray(0, count), sizes, type.name);
  const out = new type.Array(count);
  forEachElement(sizes, strides, (i, offset) => { out[i] = flat[offset]; });
  return new Tensor(out, sizes, type.name);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half-precision bits (Uint16Array) of numbers, rounded to nearest even. */
function float32ToFloat16(values) {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i];
    const x = u32[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {  // inf or NaN (a quiet NaN stays NaN)
      out[i] = sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 0x1f) { out[i] = sign | 0x7c00; continue; }  // overflow: inf
    if (e <= 0) {  // subnormal half or zero
      if (e < -10) { out[i] = sign; continue; }
      mant |= 0x800000;
      const shift = 14 - e;
      let half = mant >>> shift;
      const rest = mant & ((1 << shift) - 1);
      const halfway = 1 << (shift - 1);
      if (rest > halfway || (rest === halfway && (half & 1))) half++;
      out[i] = sign | half;
      continue;
    }
    let half = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half++;  // may carry into inf
    out[i] = sign | half;
  }
  return out;
}

/** Float32Array of IEEE half-precision bits. */
function float16ToFloat32(bits) {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) out[i] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) out[i] = mant ? NaN : sign * Infinity;
    else out[i] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return out;
}

module.exports = {
  DATA_TYPES, Tensor, asTensor, isTensorLike, dataTypeInfo, dataTypeOfArray, packedStrides,
  minTensorBytes, tensorDesc, pack, unpack, float32ToFloat16, float16ToFloat32,
};
