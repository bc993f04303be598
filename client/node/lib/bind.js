'use strict';
// Binding tensors to an operator: an input, scale or bias is a tensor (sent
// as bytes through its descriptor's layout) or a resident tensor's handle
// (sent by name). What a descriptor lacks (data type, sizes, total size) is
// filled from its tensor or from the TensorHandle's descriptor, and the
// output copies what it lacks from the input. Used by execute, streams,
// chunked calls and chains alike.

const { asTensor, isTensorLike, dataTypeInfo, minTensorBytes, pack } = require('./layout');
const { operatorDesc, operatorBody, resolveAxes } = require('./operator');

const SLOTS = ['input', 'scale', 'bias'];

/** A resident tensor: its opaque handle string, TensorDesc, size in bytes,
 * expiry (Unix ms; 0 never) and device. String(handle) is the handle; a
 * TensorHandle or the bare string may be passed wherever a handle goes. */
class TensorHandle {
  constructor(handle, desc, size, expiresUnixMs, device) {
    this.handle = handle;
    this.desc = desc;
    this.size = size !== undefined ? size
      : (desc ? Number(desc.total_tensor_size_in_bytes) : undefined);
    this.expiresUnixMs = expiresUnixMs;
    this.device = device;
  }

  /** From a ResidentTensorInfo message. */
  static fromInfo(info) {
    return new TensorHandle(info.handle, info.desc, info.size_bytes, info.expires_unix_ms,
                            info.device);
  }

  toString() { return this.handle; }
}

function isHandle(source) {
  return source instanceof TensorHandle || typeof source === 'string';
}

function handleId(handle) {
  return handle instanceof TensorHandle ? handle.handle : String(handle);
}

/** Fills an absent data type, sizes or total size of `desc` from a tensor. */
function fillFromTensor(desc, tensor) {
  if (!desc.sizes || !desc.sizes.length) desc.sizes = tensor.shape.length ? tensor.shape : [1];
  if (!desc.data_type || desc.data_type === 'DATA_TYPE_UNKNOWN') {
    desc.data_type = dataTypeInfo(tensor.dataType).proto;
  }
  if (!desc.total_tensor_size_in_bytes) {
    desc.total_tensor_size_in_bytes = minTensorBytes(desc.data_type, desc.sizes, desc.strides);
  }
}

/**
 * Completes `body[slot]` from a source and returns {data: Buffer} or
 * {handle: string}.
 */
function bindSource(body, slot, source, path) {
  if (isHandle(source)) {
    const desc = body[slot] || (body[slot] = {});
    if ((!desc.sizes || !desc.sizes.length) && source instanceof TensorHandle && source.desc) {
      body[slot] = { ...source.desc };
    }
    if (!body[slot].sizes || !body[slot].sizes.length) {
      throw new TypeError(`${path}.${slot}: handle ${handleId(source)}: the descriptor must ` +
                          "give the tensor's sizes (pass a TensorHandle to copy its desc)");
    }
    return { handle: handleId(source) };
  }
  const tensor = asTensor(source);
  const desc = body[slot] || (body[slot] = {});
  fillFromTensor(desc, tensor);
  return { data: pack(desc, tensor) };
}

/** The output descriptor, completed from the input (packed). */
function fillOutput(body) {
  const input = body.input;
  const out = body.output || (body.output = {});
  if (input) {
    if (!out.sizes || !out.sizes.length) out.sizes = input.sizes;
    if (!out.data_type || out.data_type === 'DATA_TYPE_UNKNOWN') out.data_type = input.data_type;
  }
  if (!out.total_tensor_size_in_bytes && out.sizes && out.data_type) {
    out.total_tensor_size_in_bytes = minTensorBytes(out.data_type, out.sizes, out.strides);
  }
  return out;
}

/** {input, scale, bias} sources of `inputs`: one tensor or handle is the
 * input; otherwise an object with those keys. */
function sourcesOf(inputs) {
  if (isHandle(inputs) || isTensorLike(inputs)) return { input: inputs };
  if (inputs === null || typeof inputs !== 'object') {
    throw new TypeError('inputs: expected a tensor, a handle or {input, scale, bias}');
  }
  for (const key of Object.keys(inputs)) {
    if (!SLOTS.includes(key)) throw new TypeError(`inputs: unknown tensor "${key}"`);
  }
  return inputs;
}

/**
 * Binds `inputs` to a normalised copy of `op`. Returns {op, bound: {slot:
 * {data} | {handle}}, output: the output TensorDesc}.
 */
function prepare(op, inputs, path = 'operator') {
  const desc = operatorDesc(op, path);
  const [member, body] = operatorBody(desc);
  const bound = {};
  for (const [slot, source] of Object.entries(sourcesOf(inputs))) {
    if (source !== undefined && source !== null) {
      bound[slot] = bindSource(body, slot, source, `${path}.${member}`);
    }
  }
  resolveAxes(member, body, path);
  return { op: desc, bound, output: fillOutput(body) };
}

module.exports = { TensorHandle, SLOTS, isHandle, handleId, fillFromTensor, bindSource,
                   fillOutput, prepare };
