'use strict';
// The channel of a DmlClient: credentials (plaintext, TLS with system or
// private roots, mutual TLS), channel options (message sizes) and the
// metadata every call carries (tenant, bearer token).

const fs = require('fs');
const grpc = require('@grpc/grpc-js');

/** The server's default --max_message_bytes (server/options). */
const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** PEM bytes from a Buffer/Uint8Array, or from the file a string names. */
function pem(value) {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return fs.readFileSync(value);
  return Buffer.from(value);
}

/**
 * grpc.ChannelCredentials of the client's `tls` option: false/undefined
 * (plaintext), true (system roots) or {rootCerts, certChain, privateKey}
 * (PEM Buffers or file paths).
 */
function channelCredentials(tls) {
  if (!tls) return grpc.credentials.createInsecure();
  const t = tls === true ? {} : tls;
  if (Boolean(t.certChain) !== Boolean(t.privateKey)) {
    throw new TypeError('tls.certChain and tls.privateKey go together (mutual TLS)');
  }
  return grpc.credentials.createSsl(pem(t.rootCerts), pem(t.privateKey), pem(t.certChain));
}

/** grpc channel options of the client options. */
function channelOptions(options) {
  const maxMessageBytes = options.maxMessageBytes || DEFAULT_MAX_MESSAGE_BYTES;
  const out = {
    'grpc.max_send_message_length': maxMessageBytes,
    'grpc.max_receive_message_length': maxMessageBytes,
    // A connection of this client's own, so that without a tenant its
    // resident tensors (owned by the connection's peer) are its own.
    'grpc.use_local_subchannel_pool': 1,
  };
  const tls = options.tls && options.tls !== true ? options.tls : {};
  if (tls.serverName) {
    out['grpc.ssl_target_name_override'] = tls.serverName;
    out['grpc.default_authority'] = tls.serverName;
  }
  return { ...out, ...(options.channelOptions || {}) };
}

/**
 * The grpc.Metadata of one call: the client's tenant and token, overridden
 * by the call's own `tenant`, `token` and `metadata` ({key: value}).
 */
function callMetadata(defaults, call) {
  const md = new grpc.Metadata();
  const tenant = call.tenant !== undefined ? call.tenant : defaults.tenant;
  const token = call.token !== undefined ? call.token : defaults.token;
  if (tenant) md.set('tenant', tenant);
  if (token) md.set('authorization', `Bearer ${token}`);
  for (const [key, value] of Object.entries(call.metadata || {})) md.set(key, value);
  return md;
}

/** grpc CallOptions: the deadline of `deadline` (a Date or Unix ms) or of
 * `timeoutMs` from now (0 or Infinity: none). */
function callOptions(defaultTimeoutMs, call) {
  if (call.deadline !== undefined) return { deadline: call.deadline };
  const timeoutMs = call.timeoutMs !== undefined ? call.timeoutMs : defaultTimeoutMs;
  if (!timeoutMs || timeoutMs === Infinity) return {};
  return { deadline: new Date(Date.now() + timeoutMs) };
}

module.exports = { DEFAULT_MAX_MESSAGE_BYTES, channelCredentials, channelOptions, callMetadata,
                   callOptions };
