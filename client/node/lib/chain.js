'use strict';
// Chain: builds a ChainRequest (several operators run on the device in one
// ExecuteChain call) step by step. A step's input, scale or bias is a tensor
// (sent inline), a TensorHandle or handle string (resident), or the number of
// an earlier step (its output, kept on the device). Descriptors a step lacks
// are filled from its sources (an earlier step's output descriptor, a
// TensorHandle's desc, a tensor's shape) and the output copies the input's.
// Not thread-safe in any sense that matters to JavaScript: build, then send.

const { SLOTS, bindSource, fillOutput, handleId } = require('./bind');
const { operatorDesc, operatorBody, resolveAxes } = require('./operator');

class Chain {
  constructor() {
    /** @type {{op: object, sources: object, options: object}[]} */
    this.steps = [];
  }

  get length() { return this.steps.length; }

  /**
   * Appends a step and returns its index (a source for later steps).
   * options: scale, bias (sources), inPlace, returnOutput, outputHandle,
   * keepOutput, keepOutputTtlSeconds.
   */
  step(op, input, options = {}) {
    const { scale, bias, ...flags } = options;
    this.steps.push({ op, sources: { input, scale, bias }, options: flags });
    return this.steps.length - 1;
  }

  /** From [{op, input, scale, bias, returnOutput, ...}]. */
  static fromSteps(steps) {
    const chain = new Chain();
    for (const { op, input, ...options } of steps) chain.step(op, input, options);
    return chain;
  }

  /** {request: ChainRequest, outputs: [output TensorDesc of each step]}. */
  request({ featureLevel = 0, requestId = 0 } = {}) {
    const outputs = [];
    const steps = this.steps.map(({ op, sources, options }, index) => {
      const path = `steps[${index}].operator`;
      const desc = operatorDesc(op, path);
      const [member, body] = operatorBody(desc);
      const step = {
        operator: desc,
        in_place: Boolean(options.inPlace),
        return_output: Boolean(options.returnOutput),
        keep_output: Boolean(options.keepOutput),
        keep_output_ttl_seconds: options.keepOutputTtlSeconds || 0,
      };
      if (options.outputHandle !== undefined) step.output_handle = handleId(options.outputHandle);
      for (const slot of SLOTS) {
        const source = sources[slot];
        if (source === undefined || source === null) continue;
        if (typeof source === 'number') {
          step[slot] = { step: source };
          const earlier = outputs[source];
          if (earlier && (!body[slot] || !body[slot].sizes || !body[slot].sizes.length)) {
            body[slot] = { ...earlier };
          }
          continue;
        }
        step[slot] = bindSource(body, slot, source, `${path}.${member}`);
      }
      resolveAxes(member, body, path);
      outputs.push({ ...fillOutput(body) });
      return step;
    });
    return { request: { request_id: requestId, feature_level: featureLevel, steps }, outputs };
  }
}

module.exports = { Chain };
