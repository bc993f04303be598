'use strict';
// Promise and async-iterator forms of the four gRPC call kinds of
// @grpc/grpc-js, with failures as DmlError and cancellation through an
// AbortSignal. `stub` is a generated client, `method` the RPC name,
// `md` a grpc.Metadata and `callOptions` grpc's CallOptions (deadline).

const { fromServiceError } = require('./errors');

/** Cancels `call` when `signal` aborts; returns the function that unhooks it. */
function bindAbort(call, signal) {
  if (!signal) return () => {};
  const cancel = () => call.cancel();
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  return () => signal.removeEventListener('abort', cancel);
}

/** A unary call: resolves to the response, rejects with a DmlError. */
function unary(stub, method, request, md, callOptions, signal) {
  return new Promise((resolve, reject) => {
    let unhook = () => {};
    const call = stub[method](request, md, callOptions, (error, response) => {
      unhook();
      if (error) reject(fromServiceError(error));
      else resolve(response);
    });
    unhook = bindAbort(call, signal);
  });
}

// Resolves when the call may take another message ('drain'), or when it ended.
function writable(call) {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('close', done);
      call.off('status', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
    call.on('status', done);
  });
}

/** Writes every message of a (sync or async) iterable into `call` with flow
 * control, then half-closes it. Stops early when the call ended. */
async function writeAll(call, messages, isDone) {
  for await (const message of messages) {
    if (isDone()) return;
    if (!call.write(message)) await writable(call);
  }
  if (!isDone()) call.end();
}

/**
 * Reads a streaming call as an async generator of responses while `messages`
 * (for client-streaming calls; null for server streaming) are written. A
 * failure of the messages (a bad request object, a throwing generator)
 * cancels the call and is what the generator throws; an early `break`
 * cancels the call too.
 */
async function* readWhileWriting(call, messages, signal) {
  let finished = false;
  let writeError = null;
  call.on('status', () => { finished = true; });
  const unhook = bindAbort(call, signal);
  const writing = messages === null ? Promise.resolve()
    : writeAll(call, messages, () => finished).catch((error) => {
      writeError = error;
      call.cancel();
    });
  try {
    for await (const response of call) yield response;
  } catch (error) {
    await writing;
    throw writeError || fromServiceError(error);
  } finally {
    if (!finished) call.cancel();
    unhook();
  }
  await writing;
  if (writeError) throw writeError;
}

/** A server-streaming call as an async generator of responses; the call
 * starts when the generator is first read. */
async function* serverStream(stub, method, request, md, callOptions, signal) {
  yield* readWhileWriting(stub[method](request, md, callOptions), null, signal);
}

/** A bidirectional call: writes `messages`, yields the responses; the call
 * starts when the generator is first read. */
async function* duplex(stub, method, messages, md, callOptions, signal) {
  yield* readWhileWriting(stub[method](md, callOptions), messages, signal);
}

/** A client-streaming call: writes `messages`, resolves to the response. */
function clientStream(stub, method, messages, md, callOptions, signal) {
  return new Promise((resolve, reject) => {
    let writeError = null;
    let finished = false;
    let unhook = () => {};
    const call = stub[method](md, callOptions, (error, response) => {
      finished = true;
      unhook();
      if (writeError) reject(writeError);
      else if (error) reject(fromServiceError(error));
      else resolve(response);
    });
    unhook = bindAbort(call, signal);
    writeAll(call, messages, () => finished).catch((error) => {
      writeError = error;
      call.cancel();
    });
  });
}

module.exports = { unary, serverStream, clientStream, duplex };
