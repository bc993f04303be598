'use strict';
// DmlError: a failed call (or one failed request of a stream) with its gRPC
// status code and the google.rpc.BadRequest violations the server attaches
// in the grpc-status-details-bin trailer: each violation's rule id (the part
// of its description before ':') and request field path.

const { status } = require('@grpc/grpc-js');
const { decode } = require('./proto');

const CODE_NAMES = new Map(Object.entries(status).map(([name, code]) => [code, name]));
const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

function ruleOf(description) {
  const colon = description.indexOf(':');
  return (colon < 0 ? description : description.slice(0, colon)).trim();
}

class DmlError extends Error {
  /**
   * @param {number} code gRPC status code (grpc.status)
   * @param {string} details the status message
   * @param {{rule: string, field: string, description: string}[]} [violations]
   * @param {object} [extra] metadata (grpc.Metadata), requestId
   */
  constructor(code, details, violations = [], extra = {}) {
    const codeName = CODE_NAMES.get(code) || `CODE_${code}`;
    const v = violations[0];
    const where = v && !details.includes(v.field) ? ` [${v.rule} at ${v.field}]` : '';
    super(`${codeName}: ${details}${where}`);
    this.name = 'DmlError';
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.violations = violations;
    this.metadata = extra.metadata;
    this.requestId = extra.requestId;
  }

  /** Rule id of the first (normative) violation; without violations, the
   * id that starts the message ("AUTH_TOKEN_MISSING: ..."), or undefined. */
  get rule() {
    if (this.violations.length) return this.violations[0].rule;
    const m = /^([A-Z][A-Z0-9_]+):/.exec(this.details || '');
    return m ? m[1] : undefined;
  }

  /** Field path of the first violation, or undefined. */
  get field() { return this.violations.length ? this.violations[0].field : undefined; }
}

/** The violations of a grpc-status-details-bin trailer value. */
function violationsFromStatusDetails(buffer) {
  const out = [];
  for (const any of decode('google.rpc.Status', buffer).details) {
    if (any.type_url !== BAD_REQUEST_TYPE) continue;
    for (const v of decode('google.rpc.BadRequest', any.value).field_violations) {
      out.push({ rule: ruleOf(v.description), field: v.field, description: v.description });
    }
  }
  return out;
}

/** A DmlError from a @grpc/grpc-js ServiceError (or any error: returned as is
 * when it carries no gRPC code). */
function fromServiceError(error) {
  if (error instanceof DmlError || typeof error.code !== 'number') return error;
  const violations = [];
  if (error.metadata) {
    for (const value of error.metadata.get('grpc-status-details-bin')) {
      violations.push(...violationsFromStatusDetails(value));
    }
  }
  return new DmlError(error.code, error.details || error.message, violations,
                      { metadata: error.metadata });
}

/** The DmlError of a failed ExecuteStream response (status_code != 0). */
function fromStreamResponse(response) {
  const violations = response.violations.map((v) => ({
    rule: v.rule || ruleOf(v.description), field: v.field, description: v.description,
  }));
  return new DmlError(response.status_code, response.status_message, violations,
                      { requestId: response.request_id });
}

module.exports = { DmlError, fromServiceError, fromStreamResponse, violationsFromStatusDetails };
