'use strict';
// The package's copies of proto/ (client/node/proto, refreshed by
// scripts/sync_protos.js), loaded once with @grpc/proto-loader: the service
// definitions for @grpc/grpc-js, the message descriptors that operator.js
// checks user objects against, and google.rpc.Status / BadRequest for the
// error details. Messages keep the proto's snake_case field names, as the
// server's error field paths do; enums come back as their names and 64-bit
// integers as Numbers.

const path = require('path');
const protoLoader = require('@grpc/proto-loader');

const PROTO_DIR = path.join(__dirname, '..', 'proto');
const PROTO_FILES = [
  'dmlserve/v1/dmlserve.proto',
  'google/rpc/status.proto',
  'google/rpc/error_details.proto',
];
const PACKAGE = 'dmlserve.v1';

const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let definition = null;

/** The proto-loader PackageDefinition of the package's protos (loaded once). */
function packageDefinition() {
  if (definition === null) definition = protoLoader.loadSync(PROTO_FILES, LOADER_OPTIONS);
  return definition;
}

/** The DescriptorProto (JSON form) of a message, by full or dmlserve.v1 name. */
function messageDescriptor(name) {
  const def = packageDefinition();
  const full = name.startsWith('.') ? name.slice(1)
    : (def[name] ? name : `${PACKAGE}.${name}`);
  const entry = def[full];
  if (!entry || !entry.type || !entry.type.field) throw new Error(`no message ${name}`);
  return entry.type;
}

/** The enum value names of a dmlserve.v1 enum, by number. */
function enumValues(name) {
  const entry = packageDefinition()[`${PACKAGE}.${name}`];
  return new Map(entry.type.value.map((v) => [v.number, v.name]));
}

/** Decodes a message of the package definition (google.rpc.Status, ...). */
function decode(fullName, buffer) {
  return packageDefinition()[fullName].deserialize(buffer);
}

module.exports = { PROTO_DIR, PROTO_FILES, packageDefinition, messageDescriptor, enumValues,
                   decode };
