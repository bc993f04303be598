'use strict';
// Offline tests of operator descriptors (lib/operator.js), binding
// (lib/bind.js) and chain requests (lib/chain.js): field names checked
// against the proto, one table of defaults, negative axes, descriptors
// filled from tensors, handles and earlier steps, error details decoded.

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { Chain, Tensor, TensorHandle, DEFAULTS, operator, operatorDesc, tensorDesc,
        packageDefinition } = require('..');
const { prepare } = require('../lib/bind');
const { violationsFromStatusDetails, fromServiceError } = require('../lib/errors');

const X = new Tensor(new Float32Array(24), [2, 3, 4]);

describe('operator descriptors', () => {
  it('take snake_case or camelCase (client/examples) and check every field', () => {
    const example = JSON.parse(fs.readFileSync(
      path.join(__dirname, '..', '..', 'examples', 'mvn1_fused_celu.json'), 'utf8'));
    const op = operatorDesc(example);
    assert.equal(op.mvn1.input.total_tensor_size_in_bytes, 480);
    assert.equal(op.mvn1.normalize_variance, true);
    assert.deepEqual(op.mvn1.fused_activation, { celu: { alpha: 1 } });
    assert.throws(() => operatorDesc({ mvn1: { axes: [1], fusedActivation: { celu: { alhpa: 1 } } } }),
                  /unknown field "alhpa" of ActivationCelu at operator\.mvn1\.fused_activation\.celu\.alhpa/);
    assert.throws(() => operatorDesc({ celu: {}, relu: {} }), /exactly one member, got celu, relu/);
    assert.throws(() => operatorDesc({}), /exactly one member, got none/);
    assert.throws(() => operatorDesc({ celu: 3 }), /operator\.celu: expected an object/);
  });

  it('apply the one table of defaults, also to fused activations', () => {
    assert.deepEqual(operatorDesc({ celu: {} }), { celu: { alpha: 1 } });
    assert.deepEqual(operatorDesc({ leaky_relu: { alpha: 0.2 } }), { leaky_relu: { alpha: 0.2 } });
    const mvn = operator('mvn1', { axes: [1], fused: ['elu', {}] });
    assert.equal(mvn.mvn1.epsilon, DEFAULTS.mvn1.epsilon);
    assert.deepEqual(mvn.mvn1.fused_activation, { elu: { alpha: 1 } });
    assert.deepEqual(operatorDesc({ threshold: {} }), { threshold: {} });  // min is required
    assert.deepEqual(operator('threshold', { min: 0, scaleBias: [2, 1] }).threshold.scale_bias,
                     { scale: 2, bias: 1 });
  });

  it('accept data type names and scalars for lists, and fill total sizes', () => {
    const op = operatorDesc({ mvn1: { input: { dataType: 'float16', sizes: [2, 3] }, axes: -1 } });
    assert.deepEqual(op.mvn1.input, { data_type: 'DATA_TYPE_FLOAT16', sizes: [2, 3],
                                      total_tensor_size_in_bytes: 12 });
    assert.deepEqual(op.mvn1.axes, [-1]);
    const json = operatorDesc({ relu: { input: { sizes: ['2', '3'], totalTensorSizeInBytes: '24' } } });
    assert.deepEqual(json.relu.input, { sizes: [2, 3], total_tensor_size_in_bytes: 24 });
  });

  it('check scalar types, with the path of the bad value', () => {
    assert.throws(() => operatorDesc({ celu: { alpha: 'abc' } }), /operator\.celu\.alpha: expected a number, got "abc"/);
    assert.throws(() => operatorDesc({ mvn1: { axes: [0, 1.5] } }), /operator\.mvn1\.axes\[1\]: expected an integer/);
    assert.throws(() => operatorDesc({ relu: { input: { sizes: [2, -3] } } }),
                  /operator\.relu\.input\.sizes\[1\]: expected a non-negative integer, got -3/);
    assert.throws(() => operatorDesc({ mvn1: { axes: [0], normalizeVariance: 1 } }),
                  /operator\.mvn1\.normalize_variance: expected a boolean/);
    assert.throws(() => operatorDesc({ relu: { input: { dataType: {} } } }),
                  /operator\.relu\.input\.data_type: expected a DataType name or number/);
  });
});

describe('binding tensors', () => {
  it('fills descriptors from the tensor, resolves negative axes, packs the bytes', () => {
    const { op, bound, output } = prepare({ mvn1: { axes: [-1, -2] } }, X);
    assert.deepEqual(op.mvn1.axes, [2, 1]);
    const packed = { data_type: 'DATA_TYPE_FLOAT32', sizes: [2, 3, 4], total_tensor_size_in_bytes: 96 };
    assert.deepEqual(op.mvn1.input, packed);
    assert.deepEqual(output, packed);
    assert.equal(bound.input.data.length, 96);
    assert.throws(() => prepare({ mvn1: { axes: [-4] } }, X), /axis -4 is not in \[-3, 3\)/);
  });

  it('sends handles by name, with the TensorHandle desc', () => {
    const h = new TensorHandle('t-1', tensorDesc('float16', [8]));
    const { op, bound } = prepare({ relu: {} }, { input: h });
    assert.deepEqual(bound.input, { handle: 't-1' });
    assert.deepEqual(op.relu.output.sizes, [8]);
    assert.throws(() => prepare({ relu: {} }, 't-2'), /must give the tensor's sizes/);
    assert.throws(() => prepare({ relu: {} }, { input: X, weights: X }), /unknown tensor "weights"/);
  });
});

describe('Chain', () => {
  it('builds steps from tensors, handles and earlier steps', () => {
    const chain = new Chain();
    const a = chain.step({ celu: {} }, X);
    const b = chain.step(operator('mvn1', { axes: -1 }), a, { keepOutput: true });
    chain.step({ relu: {} }, b, { returnOutput: true, outputHandle: new TensorHandle('t-9') });
    const { request, outputs } = chain.request({ requestId: 4 });
    assert.equal(request.request_id, 4);
    assert.equal(request.steps.length, 3);
    assert.equal(request.steps[0].input.data.length, 96);
    assert.deepEqual(request.steps[1].input, { step: 0 });
    assert.deepEqual(request.steps[1].operator.mvn1.axes, [2]);
    assert.equal(request.steps[1].keep_output, true);
    assert.equal(request.steps[2].output_handle, 't-9');
    assert.deepEqual(outputs[2].sizes, [2, 3, 4]);
    // The request is a valid ChainRequest message.
    const method = packageDefinition()['dmlserve.v1.DmlService'].ExecuteChain;
    const back = method.requestDeserialize(method.requestSerialize(request));
    assert.equal(back.steps[2].input.step, 1);
    assert.throws(() => Chain.fromSteps([{ op: { nope: {} }, input: X }]).request(),
                  /unknown field "nope" of OperatorDesc at steps\[0\]\.operator\.nope/);
  });
});

describe('error details', () => {
  it('decode a google.rpc.Status trailer into rule ids and field paths', () => {
    const def = packageDefinition();
    const bad = def['google.rpc.BadRequest'].serialize({ field_violations: [
      { field: 'operator.mvn1.axes[1]', description: 'MVN_AXES_DUPLICATE: axis 1 twice' }] });
    const trailer = def['google.rpc.Status'].serialize({ code: 3, message: 'bad', details: [
      { type_url: 'type.googleapis.com/other.Thing', value: Buffer.from([8, 1]) },
      { type_url: 'type.googleapis.com/google.rpc.BadRequest', value: bad }] });
    assert.deepEqual(violationsFromStatusDetails(trailer), [{
      rule: 'MVN_AXES_DUPLICATE', field: 'operator.mvn1.axes[1]',
      description: 'MVN_AXES_DUPLICATE: axis 1 twice' }]);
    const error = fromServiceError({ code: 3, details: 'bad', metadata: { get: () => [trailer] } });
    assert.equal(error.codeName, 'INVALID_ARGUMENT');
    assert.equal(error.rule, 'MVN_AXES_DUPLICATE');
    assert.equal(error.field, 'operator.mvn1.axes[1]');
    const plain = fromServiceError({ code: 16, details: 'AUTH_TOKEN_MISSING: no token', metadata: { get: () => [] } });
    assert.equal(plain.rule, 'AUTH_TOKEN_MISSING');
    assert.equal(plain.field, undefined);
  });
});
