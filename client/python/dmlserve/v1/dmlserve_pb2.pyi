from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DATA_TYPE_FLOAT16: DataType
DATA_TYPE_FLOAT32: DataType
DATA_TYPE_FLOAT64: DataType
DATA_TYPE_INT16: DataType
DATA_TYPE_INT32: DataType
DATA_TYPE_INT4: DataType
DATA_TYPE_INT64: DataType
DATA_TYPE_INT8: DataType
DATA_TYPE_UINT16: DataType
DATA_TYPE_UINT32: DataType
DATA_TYPE_UINT4: DataType
DATA_TYPE_UINT64: DataType
DATA_TYPE_UINT8: DataType
DATA_TYPE_UNKNOWN: DataType
DESCRIPTOR: _descriptor.FileDescriptor
FEATURE_LEVEL_1_0: FeatureLevel
FEATURE_LEVEL_2_0: FeatureLevel
FEATURE_LEVEL_2_1: FeatureLevel
FEATURE_LEVEL_3_0: FeatureLevel
FEATURE_LEVEL_3_1: FeatureLevel
FEATURE_LEVEL_4_0: FeatureLevel
FEATURE_LEVEL_4_1: FeatureLevel
FEATURE_LEVEL_5_0: FeatureLevel
FEATURE_LEVEL_5_1: FeatureLevel
FEATURE_LEVEL_5_2: FeatureLevel
FEATURE_LEVEL_6_0: FeatureLevel
FEATURE_LEVEL_6_1: FeatureLevel
FEATURE_LEVEL_6_2: FeatureLevel
FEATURE_LEVEL_6_3: FeatureLevel
FEATURE_LEVEL_6_4: FeatureLevel
FEATURE_LEVEL_UNSPECIFIED: FeatureLevel
TENSOR_SLOT_BIAS: TensorSlot
TENSOR_SLOT_INPUT: TensorSlot
TENSOR_SLOT_OUTPUT: TensorSlot
TENSOR_SLOT_SCALE: TensorSlot
TENSOR_SLOT_UNSPECIFIED: TensorSlot
TENSOR_TYPE_BUFFER: TensorType
TENSOR_TYPE_INVALID: TensorType

class ActivationCelu(_message.Message):
    __slots__ = ["alpha", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ...) -> None: ...

class ActivationElu(_message.Message):
    __slots__ = ["alpha", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ...) -> None: ...

class ActivationGelu(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationHardSigmoid(_message.Message):
    __slots__ = ["alpha", "beta", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BETA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    beta: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ..., beta: _Optional[float] = ...) -> None: ...

class ActivationIdentity(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationLeakyRelu(_message.Message):
    __slots__ = ["alpha", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ...) -> None: ...

class ActivationLinear(_message.Message):
    __slots__ = ["alpha", "beta", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BETA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    beta: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ..., beta: _Optional[float] = ...) -> None: ...

class ActivationParametricSoftplus(_message.Message):
    __slots__ = ["alpha", "beta", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BETA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    beta: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ..., beta: _Optional[float] = ...) -> None: ...

class ActivationRelu(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationScaledElu(_message.Message):
    __slots__ = ["alpha", "gamma", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    GAMMA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    gamma: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ..., gamma: _Optional[float] = ...) -> None: ...

class ActivationScaledTanh(_message.Message):
    __slots__ = ["alpha", "beta", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BETA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    beta: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ..., beta: _Optional[float] = ...) -> None: ...

class ActivationShrink(_message.Message):
    __slots__ = ["bias", "input", "output", "threshold"]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    bias: float
    input: TensorDesc
    output: TensorDesc
    threshold: float
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., bias: _Optional[float] = ..., threshold: _Optional[float] = ...) -> None: ...

class ActivationSigmoid(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationSoftplus(_message.Message):
    __slots__ = ["input", "output", "steepness"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STEEPNESS_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    steepness: float
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., steepness: _Optional[float] = ...) -> None: ...

class ActivationSoftsign(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationTanh(_message.Message):
    __slots__ = ["input", "output"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ...) -> None: ...

class ActivationThresholdedRelu(_message.Message):
    __slots__ = ["alpha", "input", "output"]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    alpha: float
    input: TensorDesc
    output: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., alpha: _Optional[float] = ...) -> None: ...

class ChainOutput(_message.Message):
    __slots__ = ["data", "handle", "step"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    handle: str
    step: int
    def __init__(self, step: _Optional[int] = ..., data: _Optional[bytes] = ..., handle: _Optional[str] = ...) -> None: ...

class ChainRequest(_message.Message):
    __slots__ = ["feature_level", "request_id", "steps"]
    FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    feature_level: FeatureLevel
    request_id: int
    steps: _containers.RepeatedCompositeFieldContainer[ChainStep]
    def __init__(self, request_id: _Optional[int] = ..., feature_level: _Optional[_Union[FeatureLevel, str]] = ..., steps: _Optional[_Iterable[_Union[ChainStep, _Mapping]]] = ...) -> None: ...

class ChainResponse(_message.Message):
    __slots__ = ["engine", "outputs", "request_id", "server_time_us"]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_US_FIELD_NUMBER: _ClassVar[int]
    engine: str
    outputs: _containers.RepeatedCompositeFieldContainer[ChainOutput]
    request_id: int
    server_time_us: int
    def __init__(self, request_id: _Optional[int] = ..., outputs: _Optional[_Iterable[_Union[ChainOutput, _Mapping]]] = ..., engine: _Optional[str] = ..., server_time_us: _Optional[int] = ...) -> None: ...

class ChainStep(_message.Message):
    __slots__ = ["bias", "in_place", "input", "keep_output", "keep_output_ttl_seconds", "operator", "output_handle", "return_output", "scale"]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    KEEP_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    KEEP_OUTPUT_TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    RETURN_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    bias: ChainTensor
    in_place: bool
    input: ChainTensor
    keep_output: bool
    keep_output_ttl_seconds: int
    operator: OperatorDesc
    output_handle: str
    return_output: bool
    scale: ChainTensor
    def __init__(self, operator: _Optional[_Union[OperatorDesc, _Mapping]] = ..., in_place: bool = ..., input: _Optional[_Union[ChainTensor, _Mapping]] = ..., scale: _Optional[_Union[ChainTensor, _Mapping]] = ..., bias: _Optional[_Union[ChainTensor, _Mapping]] = ..., return_output: bool = ..., output_handle: _Optional[str] = ..., keep_output: bool = ..., keep_output_ttl_seconds: _Optional[int] = ...) -> None: ...

class ChainTensor(_message.Message):
    __slots__ = ["data", "handle", "step"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    handle: str
    step: int
    def __init__(self, data: _Optional[bytes] = ..., handle: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...

class ChunkedHeader(_message.Message):
    __slots__ = ["chunk_bytes", "feature_level", "in_place", "operator", "request_id"]
    CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    chunk_bytes: int
    feature_level: FeatureLevel
    in_place: bool
    operator: OperatorDesc
    request_id: int
    def __init__(self, request_id: _Optional[int] = ..., feature_level: _Optional[_Union[FeatureLevel, str]] = ..., operator: _Optional[_Union[OperatorDesc, _Mapping]] = ..., in_place: bool = ..., chunk_bytes: _Optional[int] = ...) -> None: ...

class ChunkedRequest(_message.Message):
    __slots__ = ["chunk", "end", "header"]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    chunk: TensorChunk
    end: bool
    header: ChunkedHeader
    def __init__(self, header: _Optional[_Union[ChunkedHeader, _Mapping]] = ..., chunk: _Optional[_Union[TensorChunk, _Mapping]] = ..., end: bool = ...) -> None: ...

class ChunkedResponse(_message.Message):
    __slots__ = ["chunk", "done", "engine", "request_id", "server_time_us"]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_US_FIELD_NUMBER: _ClassVar[int]
    chunk: TensorChunk
    done: bool
    engine: str
    request_id: int
    server_time_us: int
    def __init__(self, request_id: _Optional[int] = ..., chunk: _Optional[_Union[TensorChunk, _Mapping]] = ..., done: bool = ..., engine: _Optional[str] = ..., server_time_us: _Optional[int] = ...) -> None: ...

class CreateTensorRequest(_message.Message):
    __slots__ = ["data", "desc", "ttl_seconds"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DESC_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    desc: TensorDesc
    ttl_seconds: int
    def __init__(self, desc: _Optional[_Union[TensorDesc, _Mapping]] = ..., data: _Optional[bytes] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class DeviceInfo(_message.Message):
    __slots__ = ["backend", "kind", "memory_bytes", "memory_cap_bytes", "name"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_CAP_BYTES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    backend: str
    kind: str
    memory_bytes: int
    memory_cap_bytes: int
    name: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., backend: _Optional[str] = ..., memory_bytes: _Optional[int] = ..., memory_cap_bytes: _Optional[int] = ...) -> None: ...

class ElementWiseClip(_message.Message):
    __slots__ = ["input", "max", "min", "output", "scale_bias"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SCALE_BIAS_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    max: float
    min: float
    output: TensorDesc
    scale_bias: ScaleBias
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., scale_bias: _Optional[_Union[ScaleBias, _Mapping]] = ..., min: _Optional[float] = ..., max: _Optional[float] = ...) -> None: ...

class ElementWiseThreshold(_message.Message):
    __slots__ = ["input", "min", "output", "scale_bias"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SCALE_BIAS_FIELD_NUMBER: _ClassVar[int]
    input: TensorDesc
    min: float
    output: TensorDesc
    scale_bias: ScaleBias
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., scale_bias: _Optional[_Union[ScaleBias, _Mapping]] = ..., min: _Optional[float] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ["bias", "bias_handle", "feature_level", "in_place", "input", "input_handle", "keep_output", "keep_output_ttl_seconds", "operator", "output_handle", "request_id", "scale", "scale_handle"]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    BIAS_HANDLE_FIELD_NUMBER: _ClassVar[int]
    FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    INPUT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    KEEP_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    KEEP_OUTPUT_TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    SCALE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    bias: bytes
    bias_handle: str
    feature_level: FeatureLevel
    in_place: bool
    input: bytes
    input_handle: str
    keep_output: bool
    keep_output_ttl_seconds: int
    operator: OperatorDesc
    output_handle: str
    request_id: int
    scale: bytes
    scale_handle: str
    def __init__(self, request_id: _Optional[int] = ..., feature_level: _Optional[_Union[FeatureLevel, str]] = ..., operator: _Optional[_Union[OperatorDesc, _Mapping]] = ..., in_place: bool = ..., input: _Optional[bytes] = ..., scale: _Optional[bytes] = ..., bias: _Optional[bytes] = ..., input_handle: _Optional[str] = ..., scale_handle: _Optional[str] = ..., bias_handle: _Optional[str] = ..., output_handle: _Optional[str] = ..., keep_output: bool = ..., keep_output_ttl_seconds: _Optional[int] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ["engine", "output", "output_handle", "request_id", "server_time_us", "status_code", "status_message", "violations"]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_US_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    engine: str
    output: bytes
    output_handle: str
    request_id: int
    server_time_us: int
    status_code: int
    status_message: str
    violations: _containers.RepeatedCompositeFieldContainer[FieldViolation]
    def __init__(self, request_id: _Optional[int] = ..., output: _Optional[bytes] = ..., status_code: _Optional[int] = ..., status_message: _Optional[str] = ..., violations: _Optional[_Iterable[_Union[FieldViolation, _Mapping]]] = ..., engine: _Optional[str] = ..., server_time_us: _Optional[int] = ..., output_handle: _Optional[str] = ...) -> None: ...

class FieldViolation(_message.Message):
    __slots__ = ["description", "field", "rule"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    description: str
    field: str
    rule: str
    def __init__(self, rule: _Optional[str] = ..., field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class FusedActivation(_message.Message):
    __slots__ = ["celu", "elu", "gelu", "hard_sigmoid", "identity", "leaky_relu", "linear", "parametric_softplus", "relu", "scaled_elu", "scaled_tanh", "shrink", "sigmoid", "softplus", "softsign", "tanh", "thresholded_relu"]
    CELU_FIELD_NUMBER: _ClassVar[int]
    ELU_FIELD_NUMBER: _ClassVar[int]
    GELU_FIELD_NUMBER: _ClassVar[int]
    HARD_SIGMOID_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    LEAKY_RELU_FIELD_NUMBER: _ClassVar[int]
    LINEAR_FIELD_NUMBER: _ClassVar[int]
    PARAMETRIC_SOFTPLUS_FIELD_NUMBER: _ClassVar[int]
    RELU_FIELD_NUMBER: _ClassVar[int]
    SCALED_ELU_FIELD_NUMBER: _ClassVar[int]
    SCALED_TANH_FIELD_NUMBER: _ClassVar[int]
    SHRINK_FIELD_NUMBER: _ClassVar[int]
    SIGMOID_FIELD_NUMBER: _ClassVar[int]
    SOFTPLUS_FIELD_NUMBER: _ClassVar[int]
    SOFTSIGN_FIELD_NUMBER: _ClassVar[int]
    TANH_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDED_RELU_FIELD_NUMBER: _ClassVar[int]
    celu: ActivationCelu
    elu: ActivationElu
    gelu: ActivationGelu
    hard_sigmoid: ActivationHardSigmoid
    identity: ActivationIdentity
    leaky_relu: ActivationLeakyRelu
    linear: ActivationLinear
    parametric_softplus: ActivationParametricSoftplus
    relu: ActivationRelu
    scaled_elu: ActivationScaledElu
    scaled_tanh: ActivationScaledTanh
    shrink: ActivationShrink
    sigmoid: ActivationSigmoid
    softplus: ActivationSoftplus
    softsign: ActivationSoftsign
    tanh: ActivationTanh
    thresholded_relu: ActivationThresholdedRelu
    def __init__(self, elu: _Optional[_Union[ActivationElu, _Mapping]] = ..., hard_sigmoid: _Optional[_Union[ActivationHardSigmoid, _Mapping]] = ..., identity: _Optional[_Union[ActivationIdentity, _Mapping]] = ..., leaky_relu: _Optional[_Union[ActivationLeakyRelu, _Mapping]] = ..., linear: _Optional[_Union[ActivationLinear, _Mapping]] = ..., parametric_softplus: _Optional[_Union[ActivationParametricSoftplus, _Mapping]] = ..., relu: _Optional[_Union[ActivationRelu, _Mapping]] = ..., scaled_elu: _Optional[_Union[ActivationScaledElu, _Mapping]] = ..., scaled_tanh: _Optional[_Union[ActivationScaledTanh, _Mapping]] = ..., sigmoid: _Optional[_Union[ActivationSigmoid, _Mapping]] = ..., softplus: _Optional[_Union[ActivationSoftplus, _Mapping]] = ..., softsign: _Optional[_Union[ActivationSoftsign, _Mapping]] = ..., tanh: _Optional[_Union[ActivationTanh, _Mapping]] = ..., thresholded_relu: _Optional[_Union[ActivationThresholdedRelu, _Mapping]] = ..., shrink: _Optional[_Union[ActivationShrink, _Mapping]] = ..., celu: _Optional[_Union[ActivationCelu, _Mapping]] = ..., gelu: _Optional[_Union[ActivationGelu, _Mapping]] = ...) -> None: ...

class GetCapabilitiesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetCapabilitiesResponse(_message.Message):
    __slots__ = ["backend", "device_kind", "device_name", "devices", "feature_levels", "highest_feature_level", "limits", "operators", "server_version"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_KIND_FIELD_NUMBER: _ClassVar[int]
    DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    FEATURE_LEVELS_FIELD_NUMBER: _ClassVar[int]
    HIGHEST_FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    OPERATORS_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    backend: str
    device_kind: str
    device_name: str
    devices: _containers.RepeatedCompositeFieldContainer[DeviceInfo]
    feature_levels: _containers.RepeatedScalarFieldContainer[FeatureLevel]
    highest_feature_level: FeatureLevel
    limits: Limits
    operators: _containers.RepeatedCompositeFieldContainer[OperatorSupport]
    server_version: str
    def __init__(self, server_version: _Optional[str] = ..., device_name: _Optional[str] = ..., device_kind: _Optional[str] = ..., backend: _Optional[str] = ..., highest_feature_level: _Optional[_Union[FeatureLevel, str]] = ..., feature_levels: _Optional[_Iterable[_Union[FeatureLevel, str]]] = ..., operators: _Optional[_Iterable[_Union[OperatorSupport, _Mapping]]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., devices: _Optional[_Iterable[_Union[DeviceInfo, _Mapping]]] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ["default_chunk_bytes", "device_memory_cap_bytes", "max_batch_bytes", "max_batch_requests", "max_chain_steps", "max_chunk_bytes", "max_in_flight", "max_message_bytes", "max_queue_delay_us", "max_queue_depth", "max_tensor_bytes", "resident_bytes_per_principal", "resident_bytes_total", "resident_ttl_seconds"]
    DEFAULT_CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_MEMORY_CAP_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    MAX_CHAIN_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUE_DELAY_US_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    MAX_TENSOR_BYTES_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_BYTES_PER_PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_BYTES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    default_chunk_bytes: int
    device_memory_cap_bytes: int
    max_batch_bytes: int
    max_batch_requests: int
    max_chain_steps: int
    max_chunk_bytes: int
    max_in_flight: int
    max_message_bytes: int
    max_queue_delay_us: int
    max_queue_depth: int
    max_tensor_bytes: int
    resident_bytes_per_principal: int
    resident_bytes_total: int
    resident_ttl_seconds: int
    def __init__(self, max_message_bytes: _Optional[int] = ..., max_tensor_bytes: _Optional[int] = ..., max_in_flight: _Optional[int] = ..., device_memory_cap_bytes: _Optional[int] = ..., max_batch_requests: _Optional[int] = ..., max_batch_bytes: _Optional[int] = ..., max_queue_delay_us: _Optional[int] = ..., max_queue_depth: _Optional[int] = ..., resident_bytes_per_principal: _Optional[int] = ..., resident_bytes_total: _Optional[int] = ..., resident_ttl_seconds: _Optional[int] = ..., max_chain_steps: _Optional[int] = ..., default_chunk_bytes: _Optional[int] = ..., max_chunk_bytes: _Optional[int] = ...) -> None: ...

class ListTensorsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListTensorsResponse(_message.Message):
    __slots__ = ["principal_bytes", "principal_quota_bytes", "tensors"]
    PRINCIPAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_QUOTA_BYTES_FIELD_NUMBER: _ClassVar[int]
    TENSORS_FIELD_NUMBER: _ClassVar[int]
    principal_bytes: int
    principal_quota_bytes: int
    tensors: _containers.RepeatedCompositeFieldContainer[ResidentTensorInfo]
    def __init__(self, tensors: _Optional[_Iterable[_Union[ResidentTensorInfo, _Mapping]]] = ..., principal_bytes: _Optional[int] = ..., principal_quota_bytes: _Optional[int] = ...) -> None: ...

class MeanVarianceNormalization(_message.Message):
    __slots__ = ["bias", "cross_channel", "epsilon", "fused_activation", "input", "normalize_variance", "output", "scale"]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    CROSS_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    FUSED_ACTIVATION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    NORMALIZE_VARIANCE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    bias: TensorDesc
    cross_channel: bool
    epsilon: float
    fused_activation: FusedActivation
    input: TensorDesc
    normalize_variance: bool
    output: TensorDesc
    scale: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., scale: _Optional[_Union[TensorDesc, _Mapping]] = ..., bias: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., cross_channel: bool = ..., normalize_variance: bool = ..., epsilon: _Optional[float] = ..., fused_activation: _Optional[_Union[FusedActivation, _Mapping]] = ...) -> None: ...

class MeanVarianceNormalization1(_message.Message):
    __slots__ = ["axes", "axis_count", "bias", "epsilon", "fused_activation", "input", "normalize_variance", "output", "scale"]
    AXES_FIELD_NUMBER: _ClassVar[int]
    AXIS_COUNT_FIELD_NUMBER: _ClassVar[int]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    FUSED_ACTIVATION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    NORMALIZE_VARIANCE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    axes: _containers.RepeatedScalarFieldContainer[int]
    axis_count: int
    bias: TensorDesc
    epsilon: float
    fused_activation: FusedActivation
    input: TensorDesc
    normalize_variance: bool
    output: TensorDesc
    scale: TensorDesc
    def __init__(self, input: _Optional[_Union[TensorDesc, _Mapping]] = ..., scale: _Optional[_Union[TensorDesc, _Mapping]] = ..., bias: _Optional[_Union[TensorDesc, _Mapping]] = ..., output: _Optional[_Union[TensorDesc, _Mapping]] = ..., axis_count: _Optional[int] = ..., axes: _Optional[_Iterable[int]] = ..., normalize_variance: bool = ..., epsilon: _Optional[float] = ..., fused_activation: _Optional[_Union[FusedActivation, _Mapping]] = ...) -> None: ...

class OperatorDesc(_message.Message):
    __slots__ = ["celu", "clip", "elu", "gelu", "hard_sigmoid", "identity", "leaky_relu", "linear", "mvn", "mvn1", "parametric_softplus", "relu", "scaled_elu", "scaled_tanh", "shrink", "sigmoid", "softplus", "softsign", "tanh", "threshold", "thresholded_relu"]
    CELU_FIELD_NUMBER: _ClassVar[int]
    CLIP_FIELD_NUMBER: _ClassVar[int]
    ELU_FIELD_NUMBER: _ClassVar[int]
    GELU_FIELD_NUMBER: _ClassVar[int]
    HARD_SIGMOID_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    LEAKY_RELU_FIELD_NUMBER: _ClassVar[int]
    LINEAR_FIELD_NUMBER: _ClassVar[int]
    MVN1_FIELD_NUMBER: _ClassVar[int]
    MVN_FIELD_NUMBER: _ClassVar[int]
    PARAMETRIC_SOFTPLUS_FIELD_NUMBER: _ClassVar[int]
    RELU_FIELD_NUMBER: _ClassVar[int]
    SCALED_ELU_FIELD_NUMBER: _ClassVar[int]
    SCALED_TANH_FIELD_NUMBER: _ClassVar[int]
    SHRINK_FIELD_NUMBER: _ClassVar[int]
    SIGMOID_FIELD_NUMBER: _ClassVar[int]
    SOFTPLUS_FIELD_NUMBER: _ClassVar[int]
    SOFTSIGN_FIELD_NUMBER: _ClassVar[int]
    TANH_FIELD_NUMBER: _ClassVar[int]
    THRESHOLDED_RELU_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    celu: ActivationCelu
    clip: ElementWiseClip
    elu: ActivationElu
    gelu: ActivationGelu
    hard_sigmoid: ActivationHardSigmoid
    identity: ActivationIdentity
    leaky_relu: ActivationLeakyRelu
    linear: ActivationLinear
    mvn: MeanVarianceNormalization
    mvn1: MeanVarianceNormalization1
    parametric_softplus: ActivationParametricSoftplus
    relu: ActivationRelu
    scaled_elu: ActivationScaledElu
    scaled_tanh: ActivationScaledTanh
    shrink: ActivationShrink
    sigmoid: ActivationSigmoid
    softplus: ActivationSoftplus
    softsign: ActivationSoftsign
    tanh: ActivationTanh
    threshold: ElementWiseThreshold
    thresholded_relu: ActivationThresholdedRelu
    def __init__(self, clip: _Optional[_Union[ElementWiseClip, _Mapping]] = ..., threshold: _Optional[_Union[ElementWiseThreshold, _Mapping]] = ..., elu: _Optional[_Union[ActivationElu, _Mapping]] = ..., hard_sigmoid: _Optional[_Union[ActivationHardSigmoid, _Mapping]] = ..., identity: _Optional[_Union[ActivationIdentity, _Mapping]] = ..., leaky_relu: _Optional[_Union[ActivationLeakyRelu, _Mapping]] = ..., linear: _Optional[_Union[ActivationLinear, _Mapping]] = ..., parametric_softplus: _Optional[_Union[ActivationParametricSoftplus, _Mapping]] = ..., relu: _Optional[_Union[ActivationRelu, _Mapping]] = ..., scaled_elu: _Optional[_Union[ActivationScaledElu, _Mapping]] = ..., scaled_tanh: _Optional[_Union[ActivationScaledTanh, _Mapping]] = ..., sigmoid: _Optional[_Union[ActivationSigmoid, _Mapping]] = ..., softplus: _Optional[_Union[ActivationSoftplus, _Mapping]] = ..., softsign: _Optional[_Union[ActivationSoftsign, _Mapping]] = ..., tanh: _Optional[_Union[ActivationTanh, _Mapping]] = ..., thresholded_relu: _Optional[_Union[ActivationThresholdedRelu, _Mapping]] = ..., mvn: _Optional[_Union[MeanVarianceNormalization, _Mapping]] = ..., shrink: _Optional[_Union[ActivationShrink, _Mapping]] = ..., mvn1: _Optional[_Union[MeanVarianceNormalization1, _Mapping]] = ..., celu: _Optional[_Union[ActivationCelu, _Mapping]] = ..., gelu: _Optional[_Union[ActivationGelu, _Mapping]] = ...) -> None: ...

class OperatorSupport(_message.Message):
    __slots__ = ["field", "fusable_from", "in_place", "introduced", "name", "operator_type", "parameters", "tiers", "tolerance_class"]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    FUSABLE_FROM_FIELD_NUMBER: _ClassVar[int]
    INTRODUCED_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_TYPE_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    TIERS_FIELD_NUMBER: _ClassVar[int]
    TOLERANCE_CLASS_FIELD_NUMBER: _ClassVar[int]
    field: str
    fusable_from: FeatureLevel
    in_place: bool
    introduced: FeatureLevel
    name: str
    operator_type: int
    parameters: _containers.RepeatedScalarFieldContainer[str]
    tiers: _containers.RepeatedCompositeFieldContainer[SupportTier]
    tolerance_class: str
    def __init__(self, name: _Optional[str] = ..., field: _Optional[str] = ..., operator_type: _Optional[int] = ..., introduced: _Optional[_Union[FeatureLevel, str]] = ..., tiers: _Optional[_Iterable[_Union[SupportTier, _Mapping]]] = ..., in_place: bool = ..., fusable_from: _Optional[_Union[FeatureLevel, str]] = ..., tolerance_class: _Optional[str] = ..., parameters: _Optional[_Iterable[str]] = ...) -> None: ...

class ReadTensorRequest(_message.Message):
    __slots__ = ["chunk_bytes", "handle", "length", "offset"]
    CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    chunk_bytes: int
    handle: str
    length: int
    offset: int
    def __init__(self, handle: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., chunk_bytes: _Optional[int] = ...) -> None: ...

class ReleaseTensorRequest(_message.Message):
    __slots__ = ["handle"]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    handle: str
    def __init__(self, handle: _Optional[str] = ...) -> None: ...

class ReleaseTensorResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ResidentTensorInfo(_message.Message):
    __slots__ = ["desc", "device", "expires_unix_ms", "handle", "size_bytes"]
    DESC_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    desc: TensorDesc
    device: str
    expires_unix_ms: int
    handle: str
    size_bytes: int
    def __init__(self, handle: _Optional[str] = ..., desc: _Optional[_Union[TensorDesc, _Mapping]] = ..., size_bytes: _Optional[int] = ..., expires_unix_ms: _Optional[int] = ..., device: _Optional[str] = ...) -> None: ...

class ScaleBias(_message.Message):
    __slots__ = ["bias", "scale"]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    bias: float
    scale: float
    def __init__(self, scale: _Optional[float] = ..., bias: _Optional[float] = ...) -> None: ...

class SupportTier(_message.Message):
    __slots__ = ["data_types", "from_feature_level", "max_dimension_count", "min_dimension_count"]
    DATA_TYPES_FIELD_NUMBER: _ClassVar[int]
    FROM_FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    MAX_DIMENSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    MIN_DIMENSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    data_types: _containers.RepeatedScalarFieldContainer[DataType]
    from_feature_level: FeatureLevel
    max_dimension_count: int
    min_dimension_count: int
    def __init__(self, from_feature_level: _Optional[_Union[FeatureLevel, str]] = ..., min_dimension_count: _Optional[int] = ..., max_dimension_count: _Optional[int] = ..., data_types: _Optional[_Iterable[_Union[DataType, str]]] = ...) -> None: ...

class TensorChunk(_message.Message):
    __slots__ = ["data", "offset", "slot"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    offset: int
    slot: TensorSlot
    def __init__(self, slot: _Optional[_Union[TensorSlot, str]] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class TensorDesc(_message.Message):
    __slots__ = ["data_type", "dimension_count", "flags", "guaranteed_base_offset_alignment", "sizes", "strides", "total_tensor_size_in_bytes", "type"]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    GUARANTEED_BASE_OFFSET_ALIGNMENT_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    STRIDES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TENSOR_SIZE_IN_BYTES_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    data_type: DataType
    dimension_count: int
    flags: int
    guaranteed_base_offset_alignment: int
    sizes: _containers.RepeatedScalarFieldContainer[int]
    strides: _containers.RepeatedScalarFieldContainer[int]
    total_tensor_size_in_bytes: int
    type: TensorType
    def __init__(self, type: _Optional[_Union[TensorType, str]] = ..., data_type: _Optional[_Union[DataType, str]] = ..., flags: _Optional[int] = ..., dimension_count: _Optional[int] = ..., sizes: _Optional[_Iterable[int]] = ..., strides: _Optional[_Iterable[int]] = ..., total_tensor_size_in_bytes: _Optional[int] = ..., guaranteed_base_offset_alignment: _Optional[int] = ...) -> None: ...

class ValidateRequest(_message.Message):
    __slots__ = ["feature_level", "in_place", "operator"]
    FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    feature_level: FeatureLevel
    in_place: bool
    operator: OperatorDesc
    def __init__(self, feature_level: _Optional[_Union[FeatureLevel, str]] = ..., operator: _Optional[_Union[OperatorDesc, _Mapping]] = ..., in_place: bool = ...) -> None: ...

class ValidateResponse(_message.Message):
    __slots__ = ["feature_level", "valid", "violations"]
    FEATURE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    feature_level: int
    valid: bool
    violations: _containers.RepeatedCompositeFieldContainer[FieldViolation]
    def __init__(self, valid: bool = ..., violations: _Optional[_Iterable[_Union[FieldViolation, _Mapping]]] = ..., feature_level: _Optional[int] = ...) -> None: ...

class WriteTensorRequest(_message.Message):
    __slots__ = ["chunk", "create", "handle", "start_offset", "total_bytes"]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    CREATE_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    chunk: TensorChunk
    create: CreateTensorRequest
    handle: str
    start_offset: int
    total_bytes: int
    def __init__(self, handle: _Optional[str] = ..., create: _Optional[_Union[CreateTensorRequest, _Mapping]] = ..., start_offset: _Optional[int] = ..., total_bytes: _Optional[int] = ..., chunk: _Optional[_Union[TensorChunk, _Mapping]] = ...) -> None: ...

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class FeatureLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TensorType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TensorSlot(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
