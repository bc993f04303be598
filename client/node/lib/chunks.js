'use strict';
// Chunked transfers: the message streams of WriteTensor and ExecuteChunked,
// and the assembly of chunks that come back (ReadTensor, ExecuteChunked) in
// order. progress(bytesSoFar, total) is called as each chunk is handed over
// or arrives.

/** [offset, length] pairs covering [start, start + total) in chunks of at
 * most chunkBytes (none when total is 0). */
function chunkRanges(total, chunkBytes, start = 0) {
  if (!(chunkBytes > 0)) throw new RangeError('chunkBytes must be positive');
  const out = [];
  for (let o = 0; o < total; o += chunkBytes) out.push([start + o, Math.min(chunkBytes, total - o)]);
  return out;
}

/** The WriteTensorRequest stream of an upload: the first message names the
 * tensor (`handle`, or `create`: a CreateTensorRequest) with start_offset,
 * total_bytes and the first chunk; the rest carry one chunk each. */
function* writeRequests(payload, chunkBytes, { handle, create, startOffset = 0, progress } = {}) {
  const first = { start_offset: startOffset, total_bytes: payload.length };
  if (handle !== undefined) first.handle = handle;
  else first.create = create;
  const ranges = chunkRanges(payload.length, chunkBytes, startOffset);
  if (ranges.length === 0) {
    yield first;
    return;
  }
  for (let i = 0; i < ranges.length; i++) {
    const [offset, length] = ranges[i];
    const chunk = { offset, data: payload.subarray(offset - startOffset, offset - startOffset + length) };
    yield i === 0 ? { ...first, chunk } : { chunk };
    if (progress) progress(offset - startOffset + length, payload.length);
  }
}

const SLOT_NAMES = { input: 'TENSOR_SLOT_INPUT', scale: 'TENSOR_SLOT_SCALE', bias: 'TENSOR_SLOT_BIAS' };

/** The ChunkedRequest stream of ExecuteChunked: the header, each tensor's
 * chunks (input, scale, bias; offsets from 0), then `end`. */
function* chunkedRequests(header, payloads, chunkBytes, progress) {
  yield { header };
  const total = Object.values(payloads).reduce((a, p) => a + p.length, 0);
  let done = 0;
  for (const [name, slot] of Object.entries(SLOT_NAMES)) {
    const payload = payloads[name];
    if (!payload) continue;
    for (const [offset, length] of chunkRanges(payload.length, chunkBytes)) {
      yield { chunk: { slot, offset, data: payload.subarray(offset, offset + length) } };
      done += length;
      if (progress) progress(done, total);
    }
  }
  yield { end: true };
}

/** Joins TensorChunks (an async iterable) that must arrive in order from
 * `start`; throws RangeError on a gap, overlap or overrun, or a short total. */
async function assembleChunks(chunks, start, total, progress) {
  const parts = [];
  let received = 0;
  for await (const chunk of chunks) {
    if (chunk.offset !== start + received) {
      throw new RangeError(`chunk at offset ${chunk.offset}, expected ${start + received}`);
    }
    parts.push(chunk.data);
    received += chunk.data.length;
    if (total !== undefined && received > total) {
      throw new RangeError(`${received} bytes received, expected ${total}`);
    }
    if (progress) progress(received, total);
  }
  if (total !== undefined && received !== total) {
    throw new RangeError(`${received} bytes received, expected ${total}`);
  }
  return Buffer.concat(parts, received);
}

module.exports = { chunkRanges, writeRequests, chunkedRequests, assembleChunks };
