'use strict';
// DmlClient: a promise client of dmlserve.v1.DmlService and TensorService.
// Typed arrays in and out (Tensor), operator descriptors as plain objects
// (operator.js), failures as DmlError (errors.js), streams as async
// iterators. One channel per client, shared by both services; calls may run
// concurrently. close() ends the channel.

const grpc = require('@grpc/grpc-js');
const { packageDefinition } = require('./proto');
const calls = require('./calls');
const channel = require('./channel');
const { DmlError, fromStreamResponse } = require('./errors');
const { asTensor, isTensorLike, tensorDesc, minTensorBytes, pack, unpack } = require('./layout');
const { TensorHandle, prepare, handleId, isHandle } = require('./bind');
const { Chain } = require('./chain');
const { operator, operatorDesc, normalizeMessage } = require('./operator');
const chunks = require('./chunks');

let services = null;
function serviceClients() {
  if (services === null) services = grpc.loadPackageDefinition(packageDefinition()).dmlserve.v1;
  return services;
}

// Attaches a response's engine, server time and request id to a result.
function withMeta(result, response) {
  result.engine = response.engine;
  result.serverTimeUs = response.server_time_us;
  result.requestId = response.request_id;
  return result;
}

class DmlClient {
  /**
   * @param {string} [target] host:port
   * @param {object} [options] timeoutMs (per call; 0: none; default 60000),
   *   maxMessageBytes (send and receive; default the server's 256 MiB),
   *   tenant, token (bearer), tls (true or {rootCerts, certChain,
   *   privateKey, serverName}), channelOptions (extra grpc options)
   */
  constructor(target = '127.0.0.1:50051', options = {}) {
    this.target = target;
    this.timeoutMs = options.timeoutMs !== undefined ? options.timeoutMs : 60000;
    this.tenant = options.tenant;
    this.token = options.token;
    const { DmlService, TensorService } = serviceClients();
    const credentials = channel.channelCredentials(options.tls);
    const channelOptions = channel.channelOptions(options);
    this.dml = new DmlService(target, credentials, channelOptions);
    this.tensors = new TensorService(target, credentials,
                                     { ...channelOptions, channelOverride: this.dml.getChannel() });
    this._limits = null;
    this._nextRequestId = 1;
  }

  /** Closes the channel; calls in flight are cancelled. */
  close() { this.dml.close(); }

  // [metadata, call options, abort signal] of one call's options.
  _callArgs(opts = {}) {
    return [channel.callMetadata(this, opts), channel.callOptions(this.timeoutMs, opts),
            opts.signal];
  }

  _unary(stub, method, request, opts) {
    return calls.unary(stub, method, request, ...this._callArgs(opts));
  }

  /** GetCapabilities: version, devices, feature levels, operators, limits. */
  capabilities(opts) { return this._unary(this.dml, 'GetCapabilities', {}, opts); }

  /** The server's Limits (fetched once, then cached). */
  async limits(opts) {
    if (this._limits === null) this._limits = (await this.capabilities(opts)).limits;
    return this._limits;
  }

  /** Validate: {valid, violations, feature_level} of an operator (dry run). */
  validate(op, opts = {}) {
    return this._unary(this.dml, 'Validate', {
      feature_level: opts.featureLevel || 0, operator: operatorDesc(op),
      in_place: Boolean(opts.inPlace),
    }, opts);
  }

  /** Execute with a raw ExecuteRequest; resolves to the raw ExecuteResponse. */
  executeRequest(request, opts) { return this._unary(this.dml, 'Execute', request, opts); }

  // {request: ExecuteRequest, output: output TensorDesc} of execute's arguments.
  _buildExecute(op, inputs, opts) {
    const { op: desc, bound, output } = prepare(op, inputs);
    const request = {
      request_id: opts.requestId || 0, feature_level: opts.featureLevel || 0, operator: desc,
      in_place: Boolean(opts.inPlace), keep_output: Boolean(opts.keepOutput),
      keep_output_ttl_seconds: opts.keepOutputTtlSeconds || 0,
    };
    for (const [slot, source] of Object.entries(bound)) {
      if (source.data) request[slot] = source.data;
      else request[`${slot}_handle`] = source.handle;
    }
    if (opts.outputHandle !== undefined) request.output_handle = handleId(opts.outputHandle);
    return { request, output };
  }

  // The Tensor of an ExecuteResponse, or the TensorHandle that holds it.
  _executeResult(response, output, outputHandle) {
    if (response.output_handle) {
      const handle = outputHandle instanceof TensorHandle &&
        outputHandle.handle === response.output_handle ? outputHandle
        : new TensorHandle(response.output_handle, output);
      return withMeta(handle, response);
    }
    return withMeta(unpack(output, response.output), response);
  }

  /**
   * Runs an operator on `inputs` (a tensor or handle for the input, or
   * {input, scale, bias}). Resolves to the output Tensor (with engine,
   * serverTimeUs, requestId), or a TensorHandle when the output stays on the
   * server (keepOutput, outputHandle, or inPlace on an input handle).
   * opts: featureLevel, inPlace, keepOutput, keepOutputTtlSeconds,
   * outputHandle, requestId and the call options.
   */
  async execute(op, inputs, opts = {}) {
    const { request, output } = this._buildExecute(op, inputs, opts);
    const response = await this.executeRequest(request, opts);
    return this._executeResult(response, output, opts.outputHandle);
  }

  /**
   * ExecuteStream with raw messages: writes the ExecuteRequests of a (sync or
   * async) iterable, yields each ExecuteResponse as it arrives.
   */
  streamRequests(requests, opts) {
    return calls.duplex(this.dml, 'ExecuteStream', requests, ...this._callArgs(opts));
  }

  /**
   * ExecuteStream: many requests in flight on one stream. `items` is a (sync
   * or async) iterable of {op, inputs, ...execute's options}; yields
   * {requestId, output} (what execute resolves to) or {requestId, error}
   * (a DmlError: one failed request does not end the stream), in completion
   * order. Request ids default to a counter of this client.
   */
  async* stream(items, opts = {}) {
    const pending = new Map();
    const self = this;
    async function* requests() {
      for await (const { op, inputs, ...itemOpts } of items) {
        const requestId = itemOpts.requestId !== undefined ? itemOpts.requestId
          : self._nextRequestId++;
        if (pending.has(requestId)) {
          throw new TypeError(`request_id ${requestId} is already in flight on this stream`);
        }
        const { request, output } = self._buildExecute(op, inputs, { ...itemOpts, requestId });
        pending.set(requestId, { output, outputHandle: itemOpts.outputHandle });
        yield request;
      }
    }
    for await (const response of this.streamRequests(requests(), opts)) {
      const requestId = response.request_id;
      const entry = pending.get(requestId);
      if (!entry) throw new Error(`ExecuteStream answered request_id ${requestId}, never sent`);
      pending.delete(requestId);
      if (response.status_code !== 0) {
        yield { requestId, error: fromStreamResponse(response) };
      } else {
        yield { requestId, output: this._executeResult(response, entry.output, entry.outputHandle) };
      }
    }
  }

  /** ExecuteChain with a raw ChainRequest; resolves to the ChainResponse. */
  chainRequest(request, opts) { return this._unary(this.dml, 'ExecuteChain', request, opts); }

  /**
   * Runs a Chain (or [{op, input, ...step options}]) with ExecuteChain.
   * Resolves to {tensors: {step: Tensor}, handles: {step: TensorHandle},
   * engine, serverTimeUs, requestId}.
   */
  async chain(steps, opts = {}) {
    const chain = steps instanceof Chain ? steps : Chain.fromSteps(steps);
    const { request, outputs } = chain.request(opts);
    const response = await this.chainRequest(request, opts);
    const tensors = {};
    const handles = {};
    for (const o of response.outputs) {
      if (o.data.length) tensors[o.step] = unpack(outputs[o.step], o.data);
      if (o.handle) handles[o.step] = new TensorHandle(o.handle, outputs[o.step]);
    }
    return withMeta({ tensors, handles }, response);
  }

  // chunkBytes, or the server's default chunk within its maximum.
  async _chunkBytes(chunkBytes, opts) {
    if (chunkBytes) return chunkBytes;
    const limits = await this.limits(opts);
    const size = limits.default_chunk_bytes || 1 << 20;
    return Math.min(size, limits.max_chunk_bytes || size);
  }

  /**
   * ExecuteChunked: runs an operator on tensors sent in chunks of
   * opts.chunkBytes (onProgress(sent, total)); the output comes back in
   * chunks of opts.responseChunkBytes (0: the server's default;
   * onDownloadProgress(received, total)). Resolves to the output Tensor.
   */
  async executeChunked(op, inputs, opts = {}) {
    const { op: desc, bound, output } = prepare(op, inputs);
    const payloads = {};
    for (const [slot, source] of Object.entries(bound)) {
      if (!source.data) throw new TypeError('executeChunked takes tensors, not handles');
      payloads[slot] = source.data;
    }
    const header = {
      request_id: opts.requestId || 0, feature_level: opts.featureLevel || 0, operator: desc,
      in_place: Boolean(opts.inPlace), chunk_bytes: opts.responseChunkBytes || 0,
    };
    let total = Number(output.total_tensor_size_in_bytes);
    if (opts.inPlace && payloads.input) total = Math.max(total, payloads.input.length);
    const chunkBytes = await this._chunkBytes(opts.chunkBytes, opts);
    const messages = chunks.chunkedRequests(header, payloads, chunkBytes, opts.onProgress);
    const responses = calls.duplex(this.dml, 'ExecuteChunked', messages, ...this._callArgs(opts));
    let last = null;
    async function* outputChunks() {
      for await (const r of responses) {
        if (r.chunk && r.chunk.data.length) yield r.chunk;
        if (r.done) last = r;
      }
    }
    const data = await chunks.assembleChunks(outputChunks(), 0, total, opts.onDownloadProgress);
    if (last === null) throw new DmlError(grpc.status.INTERNAL, 'ExecuteChunked ended without done');
    return withMeta(unpack(output, data), last);
  }

  /**
   * A resident tensor from a TensorDesc (zero-filled) or a tensor (its packed
   * desc; larger than one chunk: uploaded with WriteTensor). opts:
   * ttlSeconds (0: the server's default), chunkBytes, onProgress.
   */
  async createTensor(source, opts = {}) {
    const ttl = opts.ttlSeconds || 0;
    if (!isTensorLike(source)) {
      const desc = normalizeMessage('TensorDesc', source, 'desc');
      if (!desc.total_tensor_size_in_bytes) {
        desc.total_tensor_size_in_bytes = minTensorBytes(desc.data_type, desc.sizes, desc.strides);
      }
      return TensorHandle.fromInfo(await this._unary(
        this.tensors, 'CreateTensor', { desc, ttl_seconds: ttl }, opts));
    }
    const tensor = asTensor(source);
    const desc = tensorDesc(tensor.dataType, tensor.shape.length ? tensor.shape : [1]);
    const payload = pack(desc, tensor);
    if (payload.length > await this._chunkBytes(opts.chunkBytes, opts)) {
      return this.upload(tensor, { ...opts, desc });
    }
    return TensorHandle.fromInfo(await this._unary(
      this.tensors, 'CreateTensor', { desc, data: payload, ttl_seconds: ttl }, opts));
  }

  /**
   * WriteTensor in chunks: `data` is a tensor (packed through opts.desc, the
   * handle's desc or its own packed desc) or raw bytes (a Buffer). With
   * opts.handle it overwrites that tensor from byte opts.offset; otherwise
   * it creates one (opts.desc needed for raw bytes; opts.ttlSeconds) that
   * exists only once every chunk arrived. Resolves to the TensorHandle.
   */
  async upload(data, opts = {}) {
    const handle = opts.handle;
    let desc = opts.desc ? normalizeMessage('TensorDesc', opts.desc, 'desc') : undefined;
    let payload;
    if (Buffer.isBuffer(data)) {
      if (handle === undefined && desc === undefined) {
        throw new TypeError('raw bytes need opts.desc to create a tensor');
      }
      payload = data;
    } else {
      const tensor = asTensor(data);
      if (!desc && handle instanceof TensorHandle) desc = handle.desc;
      if (!desc) desc = tensorDesc(tensor.dataType, tensor.shape.length ? tensor.shape : [1]);
      payload = pack(desc, tensor);
    }
    const create = handle === undefined ? { desc, ttl_seconds: opts.ttlSeconds || 0 } : undefined;
    const messages = chunks.writeRequests(payload, await this._chunkBytes(opts.chunkBytes, opts), {
      handle: handle === undefined ? undefined : handleId(handle), create,
      startOffset: opts.offset || 0, progress: opts.onProgress,
    });
    return TensorHandle.fromInfo(await calls.clientStream(
      this.tensors, 'WriteTensor', messages, ...this._callArgs(opts)));
  }

  /** ReadTensor with a raw ReadTensorRequest: yields its TensorChunks. */
  readChunks(request, opts) {
    return calls.serverStream(this.tensors, 'ReadTensor', request, ...this._callArgs(opts));
  }

  /**
   * Reads a resident tensor with ReadTensor (server chunks of
   * opts.chunkBytes; 0: its default; onProgress(received, total)). The whole
   * tensor comes back as its logical Tensor (the desc from a TensorHandle,
   * else looked up with listTensors); a range (opts.offset/length) as a
   * Buffer.
   */
  async download(handle, opts = {}) {
    const offset = opts.offset || 0;
    const length = opts.length || 0;
    const partial = offset !== 0 || length !== 0;
    let desc = handle instanceof TensorHandle ? handle.desc : undefined;
    if (!desc && !partial) desc = (await this._lookup(handle, opts)).desc;
    let total;
    if (desc && !partial) total = Number(desc.total_tensor_size_in_bytes);
    else if (desc && length === 0 && offset <= desc.total_tensor_size_in_bytes) {
      total = Number(desc.total_tensor_size_in_bytes) - offset;
    } else total = length || undefined;
    const request = { handle: handleId(handle), offset, length, chunk_bytes: opts.chunkBytes || 0 };
    const data = await chunks.assembleChunks(this.readChunks(request, opts), offset, total,
                                             opts.onProgress);
    return partial ? data : unpack(desc, data);
  }

  async _lookup(handle, opts) {
    const id = handleId(handle);
    const found = (await this.listTensors(opts)).tensors.find((t) => t.handle === id);
    if (!found) {
      throw new DmlError(grpc.status.NOT_FOUND, `HANDLE_NOT_FOUND: ${id} is not listed`);
    }
    return found;
  }

  /** ReleaseTensor. */
  async release(handle, opts) {
    await this._unary(this.tensors, 'ReleaseTensor', { handle: handleId(handle) }, opts);
  }

  /** ListTensors: {tensors: TensorHandle[], principalBytes,
   * principalQuotaBytes} of the caller's resident tensors. */
  async listTensors(opts) {
    const r = await this._unary(this.tensors, 'ListTensors', {}, opts);
    return { tensors: r.tensors.map((t) => TensorHandle.fromInfo(t)),
             principalBytes: r.principal_bytes, principalQuotaBytes: r.principal_quota_bytes };
  }

  // Helpers. params: the operator's parameters (camelCase or snake_case);
  // opts: execute's options plus inputStrides / outputStrides (element
  // strides; the payload is packed through them).

  // The operator `name` on x (a tensor or a handle) with packed or strided
  // input and output descriptors.
  _unaryOp(name, x, params, opts) {
    const body = { ...params };
    if (!isHandle(x)) {
      const t = asTensor(x);
      body.input = tensorDesc(t.dataType, t.shape, opts.inputStrides);
      body.output = tensorDesc(t.dataType, t.shape, opts.outputStrides);
    }
    return operator(name, body);
  }

  /** Any standalone activation: executeActivation('leaky_relu', x, {alpha: 0.1}). */
  executeActivation(name, x, params = {}, opts = {}) {
    return this.execute(this._unaryOp(name, x, params, opts), x, opts);
  }

  /** CELU (alpha defaults to 1). */
  executeCelu(x, params = {}, opts = {}) { return this.executeActivation('celu', x, params, opts); }

  /** max(x * scale + bias, min): params {min, scaleBias: [scale, bias]}. */
  executeThreshold(x, params, opts = {}) {
    return this.executeActivation('threshold', x, params, opts);
  }

  /** min(max, max(min, x * scale + bias)): params {min, max, scaleBias}. */
  executeClip(x, params, opts = {}) { return this.executeActivation('clip', x, params, opts); }

  /**
   * MVN1 over params.axes (a number or list; negative counts from the end),
   * with optional scale/bias tensors of the input's rank (any dim may be
   * 1), epsilon (1e-5), normalizeVariance (true) and fused ('relu',
   * ['celu', {alpha: 1}] or {celu: {...}}).
   */
  executeMvn1(x, params, opts = {}) {
    const { scale, bias, ...rest } = params;
    const op = this._unaryOp('mvn1', x, rest, opts);
    return this.execute(op, { input: x, scale, bias }, opts);
  }
}

module.exports = { DmlClient };
