'use strict';
// Operator descriptors as plain objects: { celu: { alpha: 1 } }, the proto's
// OperatorDesc with one oneof member set. Field names may be the proto's
// snake_case or proto3 JSON's camelCase (client/examples/*.json); every key is
// checked against the message descriptors, so a misspelt field is a local
// TypeError with its path instead of a field the server never sees. Data
// types may be short names ('float16'), a scalar stands for a one-element
// list (axes: -1), parameters left out take the defaults below, and a tensor
// descriptor with sizes but no total size gets the minimum. This is the one
// place for operator defaults: execute, the helpers, chains, streams and
// validate all pass through operatorDesc().

const { messageDescriptor } = require('./proto');
const { dataTypeInfo, minTensorBytes } = require('./layout');

/** Parameters of each operator that may be left out, with their values
 * (ONNX's defaults where ONNX has the operator). Everything else the server
 * requires (PARAM_MISSING): threshold's min, clip's min and max, linear,
 * parametric_softplus and scaled_tanh's alpha and beta. */
const DEFAULTS = Object.freeze({
  elu: { alpha: 1 },
  celu: { alpha: 1 },
  hard_sigmoid: { alpha: 0.2, beta: 0.5 },
  leaky_relu: { alpha: 0.01 },
  scaled_elu: { alpha: 1.67326319217681884765625, gamma: 1.05070102214813232421875 },
  softplus: { steepness: 1 },
  thresholded_relu: { alpha: 1 },
  shrink: { bias: 0, threshold: 0.5 },
  mvn1: { normalize_variance: true, epsilon: 1e-5 },
  mvn: { cross_channel: false, normalize_variance: true, epsilon: 1e-5 },
});

function snakeCase(key) {
  return key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

function fieldPath(path, key) {
  return path ? `${path}.${key}` : key;
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) &&
    !ArrayBuffer.isView(value);
}

const INTEGER_TYPES = new Set(['TYPE_INT32', 'TYPE_UINT32', 'TYPE_INT64', 'TYPE_UINT64',
                               'TYPE_SINT32', 'TYPE_SINT64', 'TYPE_FIXED32', 'TYPE_FIXED64']);
const UNSIGNED_TYPES = new Set(['TYPE_UINT32', 'TYPE_UINT64', 'TYPE_FIXED32', 'TYPE_FIXED64']);

function scalarError(path, value, what) {
  return new TypeError(`${path}: expected ${what}, got ${JSON.stringify(value)}`);
}

// A scalar field's value, checked against its type: numbers for numeric
// fields (64-bit integers also as BigInts or decimal strings, as proto3 JSON
// writes them), booleans, strings, bytes, enum names or numbers. Negative
// MVN1 axes pass: resolveAxes turns them into axes once the rank is known.
function normalizeScalar(field, value, path) {
  const type = field.type;
  if (type === 'TYPE_ENUM') {
    if (typeof value !== 'string' && !Number.isInteger(value)) {
      throw scalarError(path, value, `a ${field.typeName} name or number`);
    }
    if (field.typeName.endsWith('DataType')) {
      try { return dataTypeInfo(value).proto; } catch (e) { return value; }  // UINT4, ...
    }
    return value;
  }
  if (type === 'TYPE_BOOL') {
    if (typeof value !== 'boolean') throw scalarError(path, value, 'a boolean');
    return value;
  }
  if (type === 'TYPE_STRING') {
    if (typeof value !== 'string') throw scalarError(path, value, 'a string');
    return value;
  }
  if (type === 'TYPE_BYTES') {
    if (!(value instanceof Uint8Array)) throw scalarError(path, value, 'a Buffer');
    return value;
  }
  let number = value;
  if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value) &&
                                    type.endsWith('64'))) {
    number = Number(value);
  }
  if (typeof number !== 'number') throw scalarError(path, value, 'a number');
  if (INTEGER_TYPES.has(type)) {
    if (!Number.isInteger(number)) throw scalarError(path, value, 'an integer');
    if (UNSIGNED_TYPES.has(type) && number < 0 && field.name !== 'axes') {
      throw scalarError(path, value, 'a non-negative integer');
    }
  }
  return number;
}

function normalizeValue(field, value, path) {
  if (field.label === 'LABEL_REPEATED') {
    const list = Array.isArray(value) || ArrayBuffer.isView(value) ? Array.from(value) : [value];
    const one = { ...field, label: 'LABEL_OPTIONAL' };
    return list.map((v, i) => normalizeValue(one, v, `${path}[${i}]`));
  }
  if (field.type === 'TYPE_MESSAGE') return normalizeMessage(field.typeName, value, path);
  return normalizeScalar(field, value, path);
}

/**
 * A copy of `value` with snake_case field names, checked against the message
 * `typeName`; undefined and null members are dropped. Throws TypeError naming
 * the path of an unknown field.
 */
function normalizeMessage(typeName, value, path) {
  const desc = messageDescriptor(typeName);
  if (!isPlainObject(value)) {
    throw new TypeError(`${path}: expected an object (${desc.name}), got ${typeof value}`);
  }
  const fields = new Map(desc.field.map((f) => [f.name, f]));
  const oneofs = new Set(desc.oneofDecl.map((o) => o.name));
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    const name = fields.has(key) ? key : snakeCase(key);
    const field = fields.get(name);
    if (!field) {
      if (oneofs.has(key) && typeof v === 'string') continue;  // proto-loader's oneof marker
      throw new TypeError(`unknown field "${key}" of ${desc.name} at ${fieldPath(path, key)} ` +
                          `(fields: ${[...fields.keys()].join(', ')})`);
    }
    out[name] = normalizeValue(field, v, fieldPath(path, name));
  }
  return out;
}

function onlyMember(message, what, path) {
  const members = Object.keys(message);
  if (members.length !== 1) {
    throw new TypeError(`${path}: the ${what} must name exactly one member, got ` +
                        (members.length ? members.join(', ') : 'none'));
  }
  return members[0];
}

function applyDefaults(member, body) {
  for (const [key, value] of Object.entries(DEFAULTS[member] || {})) {
    if (body[key] === undefined) body[key] = value;
  }
}

// The tensor descriptors of an operator body that have a data type and
// sizes but no total size get the minimum (DMLCalcBufferTensorSize).
function fillTotals(body) {
  for (const slot of ['input', 'scale', 'bias', 'output']) {
    const desc = body[slot];
    if (desc && desc.sizes && desc.sizes.length && !desc.total_tensor_size_in_bytes) {
      try {
        desc.total_tensor_size_in_bytes = minTensorBytes(desc.data_type, desc.sizes, desc.strides);
      } catch (e) { /* an unknown data type: the server names it */ }
    }
  }
}

/**
 * A normalised copy of an operator descriptor (see the file comment) with
 * defaults applied. `path` prefixes error paths ("operator",
 * "steps[2].operator").
 */
function operatorDesc(op, path = 'operator') {
  const desc = normalizeMessage('OperatorDesc', op, path);
  const member = onlyMember(desc, 'OperatorDesc', path);
  const body = desc[member];
  applyDefaults(member, body);
  fillTotals(body);
  if (body.fused_activation) {
    const fused = onlyMember(body.fused_activation, 'FusedActivation',
                             `${path}.${member}.fused_activation`);
    applyDefaults(fused, body.fused_activation[fused]);
  }
  return desc;
}

/** The oneof member name and body of a normalised OperatorDesc. */
function operatorBody(desc) {
  const member = Object.keys(desc)[0];
  return [member, desc[member]];
}

/** A FusedActivation from 'relu', ['celu', {alpha: 1}] or {celu: {alpha: 1}}. */
function fusedActivation(fused) {
  if (typeof fused === 'string') return { [fused]: {} };
  if (Array.isArray(fused)) return { [fused[0]]: fused[1] || {} };
  return fused;
}

/**
 * An operator descriptor from a member name and parameters: operator('celu',
 * {alpha: 0.5}), operator('mvn1', {axes: -1, fused: 'relu'}),
 * operator('threshold', {min: 0, scaleBias: [2, 1]}). `fused` and
 * `scaleBias` ([scale, bias]) are shorthands; tensor descriptors (input,
 * output, ...) may be given or left to execute/Chain to fill.
 */
function operator(name, params = {}) {
  const body = { ...params };
  for (const key of ['fused', 'scaleBias']) {
    if (body[key] === undefined) continue;
    if (key === 'fused') body.fused_activation = fusedActivation(body.fused);
    else body.scale_bias = { scale: body.scaleBias[0], bias: body.scaleBias[1] };
    delete body[key];
  }
  return operatorDesc({ [name]: body });
}

/** Resolves negative MVN1 axes against the input's rank (a normalised body
 * whose input sizes are known). */
function resolveAxes(member, body, path) {
  if (member !== 'mvn1' || !body.axes) return;
  const rank = body.input && body.input.sizes ? body.input.sizes.length : undefined;
  body.axes = body.axes.map((axis, i) => {
    if (axis >= 0) return axis;
    if (rank === undefined || axis < -rank) {
      throw new RangeError(`${path}.mvn1.axes[${i}]: axis ${axis} is not in ` +
                           (rank === undefined ? 'range (the input sizes are unknown)'
                             : `[${-rank}, ${rank})`));
    }
    return axis + rank;
  });
}

module.exports = { DEFAULTS, operatorDesc, operatorBody, operator, fusedActivation,
                   normalizeMessage, resolveAxes };
