'use strict';
// dmlserve-client: a Node.js client of the dmlserve.v1 gRPC service
// (@grpc/grpc-js and @grpc/proto-loader, with the package's own copies of
// the .proto files). Typed arrays in and out; see README.md and index.d.ts.

const { DmlClient } = require('./lib/client');
const { Chain } = require('./lib/chain');
const { TensorHandle } = require('./lib/bind');
const { DmlError } = require('./lib/errors');
const { DEFAULTS, operator, operatorDesc } = require('./lib/operator');
const { DATA_TYPES, Tensor, tensorDesc, minTensorBytes, packedStrides, pack, unpack,
        float32ToFloat16, float16ToFloat32 } = require('./lib/layout');
const { PROTO_DIR, packageDefinition } = require('./lib/proto');
const { status } = require('@grpc/grpc-js');

module.exports = {
  DmlClient, Chain, TensorHandle, DmlError, Tensor, DEFAULTS, operator, operatorDesc,
  DATA_TYPES, tensorDesc, minTensorBytes, packedStrides, pack, unpack, float32ToFloat16,
  float16ToFloat32, PROTO_DIR, packageDefinition, status,
};
