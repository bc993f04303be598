// Type declarations of dmlserve-client (hand-written; the runtime is
// index.js). Messages keep the proto's snake_case field names
// (proto/dmlserve/v1/dmlserve.proto); enums come back as their names and
// 64-bit integers as numbers. Operator descriptors may use snake_case or
// camelCase field names.

import type { Metadata, status as grpcStatus, ChannelOptions } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';

export type DataTypeName =
  | 'float32' | 'float16' | 'uint32' | 'uint16' | 'uint8' | 'int32' | 'int16' | 'int8'
  | 'float64' | 'uint64' | 'int64';

/** A data type: short name, proto enum name or enum value. */
export type DataTypeLike = DataTypeName | `DATA_TYPE_${Uppercase<DataTypeName>}` | number;

export type TypedArray =
  | Float32Array | Float64Array | Uint32Array | Uint16Array | Uint8Array | Int32Array
  | Int16Array | Int8Array | BigUint64Array | BigInt64Array;

/** A tensor: a typed array in C order, a shape and a data type (float16 is
 * carried as raw bits in a Uint16Array). */
export class Tensor<T extends TypedArray = TypedArray> {
  constructor(data: T | ArrayLike<number>, shape?: number[], dataType?: DataTypeLike);
  data: T;
  shape: number[];
  dataType: DataTypeName;
  readonly size: number;
  /** The elements as a Float32Array (float16 bits decoded). */
  toFloat32(): Float32Array;
}

/** What the server adds to a result. */
export interface ResultMeta {
  engine: string;
  serverTimeUs: number;
  requestId: number;
}

export type ResultTensor = Tensor & ResultMeta;

/** Anything that becomes a Tensor: a Tensor, a 1-D typed array or {data, shape, dataType}. */
export type TensorLike =
  | Tensor | TypedArray | { data: TypedArray | ArrayLike<number>; shape: number[]; dataType?: DataTypeLike };

/** proto dmlserve.v1.TensorDesc (snake_case or camelCase keys). */
export interface TensorDesc {
  type?: string | number;
  data_type?: DataTypeLike | string;
  flags?: number;
  dimension_count?: number;
  sizes?: number[];
  strides?: number[];
  total_tensor_size_in_bytes?: number;
  guaranteed_base_offset_alignment?: number;
  [camelCase: string]: unknown;
}

/** proto dmlserve.v1.OperatorDesc: one member, e.g. { celu: { alpha: 1 } }. */
export type OperatorDesc = { [member: string]: Record<string, unknown> };

/** A resident tensor on the server. String(handle) is the handle. */
export class TensorHandle {
  constructor(handle: string, desc?: TensorDesc, size?: number, expiresUnixMs?: number,
              device?: string);
  handle: string;
  desc?: TensorDesc;
  size?: number;
  /** Unix ms; 0: never. */
  expiresUnixMs?: number;
  device?: string;
  /** Set when the handle is a result (keepOutput, outputHandle). */
  engine?: string;
  serverTimeUs?: number;
  requestId?: number;
  static fromInfo(info: any): TensorHandle;
  toString(): string;
}

export type HandleLike = TensorHandle | string;
export type Source = TensorLike | HandleLike;
export type Inputs = Source | { input: Source; scale?: Source; bias?: Source };

export interface Violation {
  /** Stable rule id, e.g. "MVN_AXES_DUPLICATE". */
  rule: string;
  /** Request field path, e.g. "operator.mvn1.axes[1]". */
  field: string;
  description: string;
}

/** A failed call, or one failed request of a stream. */
export class DmlError extends Error {
  constructor(code: number, details: string, violations?: Violation[],
              extra?: { metadata?: Metadata; requestId?: number });
  /** gRPC status code (see `status`). */
  code: number;
  /** e.g. "INVALID_ARGUMENT". */
  codeName: string;
  details: string;
  violations: Violation[];
  metadata?: Metadata;
  /** The request of a stream that failed. */
  requestId?: number;
  /** Rule id of the first (normative) violation. */
  readonly rule: string | undefined;
  /** Field path of the first violation. */
  readonly field: string | undefined;
}

export interface TlsOptions {
  /** PEM (Buffer) or a file path; default: the system roots. */
  rootCerts?: Buffer | string;
  /** Mutual TLS: client certificate chain and key (PEM or paths). */
  certChain?: Buffer | string;
  privateKey?: Buffer | string;
  /** The name checked against the server's certificate. */
  serverName?: string;
}

export interface ClientOptions {
  /** Deadline of each call in ms from its start; 0: none. Default 60000. */
  timeoutMs?: number;
  /** grpc max send and receive message length; default 256 MiB (the server's default). */
  maxMessageBytes?: number;
  /** Sent as the `tenant` metadata: the principal that owns resident tensors. */
  tenant?: string;
  /** Sent as `authorization: Bearer TOKEN` (servers with --auth_tokens_file). */
  token?: string;
  /** true: TLS with the system roots. */
  tls?: boolean | TlsOptions;
  /** Extra grpc channel options. */
  channelOptions?: ChannelOptions;
}

export interface CallOptions {
  timeoutMs?: number;
  deadline?: Date | number;
  signal?: AbortSignal;
  tenant?: string;
  token?: string;
  metadata?: Record<string, string>;
}

export interface ExecuteOptions extends CallOptions {
  featureLevel?: string | number;
  inPlace?: boolean;
  keepOutput?: boolean;
  keepOutputTtlSeconds?: number;
  outputHandle?: HandleLike;
  requestId?: number;
}

/** Options under which a call returns the output as a Tensor (nothing kept
 * on the server). */
export type ReturnTensor<O> = O & { keepOutput?: false; outputHandle?: undefined };
/** Options under which the output stays on the server (a TensorHandle). */
export type KeepOutput<O> = O & ({ keepOutput: true } | { outputHandle: HandleLike });
/** Inputs that are all sent as bytes. */
export type TensorInputs = TensorLike | { input: TensorLike; scale?: Source; bias?: Source };

export interface HelperOptions extends ExecuteOptions {
  /** Element strides of the input / output layout. */
  inputStrides?: number[];
  outputStrides?: number[];
}

export type Fused = string | [string, Record<string, unknown>?] | OperatorDesc;

export interface StreamItem extends ExecuteOptions {
  op: OperatorDesc;
  inputs: Inputs;
}

export type StreamResult =
  | { requestId: number; output: ResultTensor | TensorHandle; error?: undefined }
  | { requestId: number; output?: undefined; error: DmlError };

export interface ChainStepOptions {
  scale?: Source | number;
  bias?: Source | number;
  inPlace?: boolean;
  returnOutput?: boolean;
  outputHandle?: HandleLike;
  keepOutput?: boolean;
  keepOutputTtlSeconds?: number;
}

export class Chain {
  steps: { op: OperatorDesc; sources: object; options: object }[];
  readonly length: number;
  /** Appends a step; `input` may be a tensor, a handle or an earlier step's index. */
  step(op: OperatorDesc, input: Source | number, options?: ChainStepOptions): number;
  static fromSteps(steps: (ChainStepOptions & { op: OperatorDesc; input: Source | number })[]): Chain;
  request(opts?: { featureLevel?: string | number; requestId?: number }):
    { request: any; outputs: TensorDesc[] };
}

export interface ChainResult extends ResultMeta {
  tensors: Record<number, Tensor>;
  handles: Record<number, TensorHandle>;
}

export interface ChunkOptions extends CallOptions {
  chunkBytes?: number;
  onProgress?: (bytes: number, total: number | undefined) => void;
}

/** proto dmlserve.v1.Limits. */
export interface Limits {
  max_message_bytes: number;
  max_tensor_bytes: number;
  max_in_flight: number;
  device_memory_cap_bytes: number;
  max_batch_requests: number;
  max_batch_bytes: number;
  max_queue_delay_us: number;
  max_queue_depth: number;
  resident_bytes_per_principal: number;
  resident_bytes_total: number;
  resident_ttl_seconds: number;
  max_chain_steps: number;
  default_chunk_bytes: number;
  max_chunk_bytes: number;
}

/** proto dmlserve.v1.OperatorSupport. */
export interface OperatorSupport {
  name: string;
  field: string;
  operator_type: number;
  introduced: string;
  tiers: { from_feature_level: string; min_dimension_count: number;
           max_dimension_count: number; data_types: string[] }[];
  in_place: boolean;
  fusable_from?: string;
  tolerance_class: string;
  parameters: string[];
}

/** proto dmlserve.v1.GetCapabilitiesResponse. */
export interface Capabilities {
  server_version: string;
  device_name: string;
  device_kind: string;
  backend: string;
  highest_feature_level: string;
  feature_levels: string[];
  operators: OperatorSupport[];
  limits: Limits;
  devices: { name: string; kind: string; backend: string; memory_bytes: number;
             memory_cap_bytes: number }[];
}

/** proto dmlserve.v1.ExecuteResponse. */
export interface ExecuteResponse {
  request_id: number;
  output: Buffer;
  status_code: number;
  status_message: string;
  violations: Violation[];
  engine: string;
  server_time_us: number;
  output_handle: string;
}

/** proto dmlserve.v1.ChainResponse. */
export interface ChainResponse {
  request_id: number;
  outputs: { step: number; data: Buffer; handle: string }[];
  engine: string;
  server_time_us: number;
}

export interface ThresholdParams { min: number; scaleBias?: [number, number] }
export interface ClipParams { min: number; max: number; scaleBias?: [number, number] }
export interface Mvn1Params {
  /** A number or list; negative counts from the end. */
  axes: number | number[];
  scale?: Source;
  bias?: Source;
  epsilon?: number;
  normalizeVariance?: boolean;
  fused?: Fused;
}

export class DmlClient {
  constructor(target?: string, options?: ClientOptions);
  target: string;
  timeoutMs: number;
  tenant?: string;
  token?: string;
  close(): void;

  capabilities(opts?: CallOptions): Promise<Capabilities>;
  /** The server's Limits (fetched once, then cached). */
  limits(opts?: CallOptions): Promise<Limits>;
  validate(op: OperatorDesc, opts?: CallOptions & { featureLevel?: string | number; inPlace?: boolean }):
    Promise<{ valid: boolean; violations: Violation[]; feature_level: number }>;
  executeRequest(request: object, opts?: CallOptions): Promise<ExecuteResponse>;
  execute(op: OperatorDesc, inputs: TensorInputs, opts?: ReturnTensor<ExecuteOptions>): Promise<ResultTensor>;
  execute(op: OperatorDesc, inputs: Inputs, opts: KeepOutput<ExecuteOptions>): Promise<TensorHandle>;
  execute(op: OperatorDesc, inputs: Inputs, opts?: ExecuteOptions): Promise<ResultTensor | TensorHandle>;
  streamRequests(requests: Iterable<object> | AsyncIterable<object>, opts?: CallOptions):
    AsyncGenerator<ExecuteResponse>;
  stream(items: Iterable<StreamItem> | AsyncIterable<StreamItem>, opts?: CallOptions):
    AsyncGenerator<StreamResult>;
  chainRequest(request: object, opts?: CallOptions): Promise<ChainResponse>;
  chain(steps: Chain | (ChainStepOptions & { op: OperatorDesc; input: Source | number })[],
        opts?: CallOptions & { featureLevel?: string | number; requestId?: number }): Promise<ChainResult>;
  executeChunked(op: OperatorDesc, inputs: Inputs, opts?: ExecuteOptions & ChunkOptions & {
    responseChunkBytes?: number;
    onDownloadProgress?: (bytes: number, total: number | undefined) => void;
  }): Promise<ResultTensor>;
  createTensor(source: TensorLike | TensorDesc, opts?: ChunkOptions & { ttlSeconds?: number }):
    Promise<TensorHandle>;
  upload(data: TensorLike | Buffer, opts?: ChunkOptions & {
    desc?: TensorDesc; handle?: HandleLike; offset?: number; ttlSeconds?: number;
  }): Promise<TensorHandle>;
  readChunks(request: object, opts?: CallOptions): AsyncGenerator<{ offset: number; data: Buffer }>;
  /** The whole tensor as a Tensor; a range (offset, length) as a Buffer. */
  download(handle: HandleLike, opts?: ChunkOptions & { offset?: 0; length?: 0 }): Promise<Tensor>;
  download(handle: HandleLike, opts: ChunkOptions & { offset?: number; length?: number }):
    Promise<Tensor | Buffer>;
  release(handle: HandleLike, opts?: CallOptions): Promise<void>;
  listTensors(opts?: CallOptions):
    Promise<{ tensors: TensorHandle[]; principalBytes: number; principalQuotaBytes: number }>;

  executeActivation(name: string, x: TensorLike, params?: Record<string, unknown>,
                    opts?: ReturnTensor<HelperOptions>): Promise<ResultTensor>;
  executeActivation(name: string, x: Source, params?: Record<string, unknown>,
                    opts?: HelperOptions): Promise<ResultTensor | TensorHandle>;
  executeCelu(x: TensorLike, params?: { alpha?: number }, opts?: ReturnTensor<HelperOptions>):
    Promise<ResultTensor>;
  executeCelu(x: Source, params?: { alpha?: number }, opts?: HelperOptions):
    Promise<ResultTensor | TensorHandle>;
  executeThreshold(x: TensorLike, params: ThresholdParams, opts?: ReturnTensor<HelperOptions>):
    Promise<ResultTensor>;
  executeThreshold(x: Source, params: ThresholdParams, opts?: HelperOptions):
    Promise<ResultTensor | TensorHandle>;
  executeClip(x: TensorLike, params: ClipParams, opts?: ReturnTensor<HelperOptions>):
    Promise<ResultTensor>;
  executeClip(x: Source, params: ClipParams, opts?: HelperOptions):
    Promise<ResultTensor | TensorHandle>;
  executeMvn1(x: TensorLike, params: Mvn1Params, opts?: ReturnTensor<HelperOptions>):
    Promise<ResultTensor>;
  executeMvn1(x: Source, params: Mvn1Params, opts?: HelperOptions):
    Promise<ResultTensor | TensorHandle>;
}

/** Parameters that may be left out, per operator, with their values. */
export const DEFAULTS: Readonly<Record<string, Record<string, number | boolean>>>;
/** An operator descriptor from a member name and parameters (fused, scaleBias shorthands). */
export function operator(name: string, params?: Record<string, unknown>): OperatorDesc;
/** A normalised copy of an operator descriptor, defaults applied. */
export function operatorDesc(op: OperatorDesc, path?: string): OperatorDesc;

export const DATA_TYPES: readonly {
  name: DataTypeName; proto: string; value: number; bytes: number; Array: new (n: number) => TypedArray;
}[];
export function tensorDesc(dataType: DataTypeLike, shape: number[], strides?: number[],
                           total?: number): TensorDesc;
export function minTensorBytes(dataType: DataTypeLike, sizes: number[], strides?: number[]): number;
export function packedStrides(shape: number[]): number[];
export function pack(desc: TensorDesc, tensor: TensorLike): Buffer;
export function unpack(desc: TensorDesc, payload: Uint8Array): Tensor;
export function float32ToFloat16(values: ArrayLike<number>): Uint16Array;
export function float16ToFloat32(bits: ArrayLike<number>): Float32Array;

/** Where the package's copies of the .proto files are. */
export const PROTO_DIR: string;
export function packageDefinition(): PackageDefinition;
/** gRPC status codes. */
export const status: typeof grpcStatus;
