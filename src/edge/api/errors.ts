// The API's one error type and the mapping of every failure to a JSON body
// `{"error": "<stable_code>", "message": "…"}`. Domain code throws ApiError
// (or its own errors, mapped here); the 428 step-up answer is the spec's
// exact body `{"error":"step_up_required"}` with no message.

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. retry-after. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The spec's 428: proof missing, expired or already spent. Body is fixed. */
export class StepUpRequiredError extends ApiError {
  constructor() {
    super(428, 'step_up_required', 'step-up proof missing, expired or already spent');
    this.name = 'StepUpRequiredError';
  }
}

export interface ErrorBody {
  error: string;
  message?: string;
}

/** JSON schema of every error body (OpenAPI components.schemas.Error). */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', description: 'stable machine-readable code' },
    message: { type: 'string', description: 'what went wrong and what to fix' },
  },
  additionalProperties: false,
} as const;

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message: string;
  validation?: { keyword: string; instancePath: string; params: Record<string, unknown>; message?: string }[];
  validationContext?: string;
}

function validationMessage(err: FrameworkError): { code: string; message: string } {
  const first = err.validation?.[0];
  const where = `${err.validationContext ?? 'body'}${first?.instancePath.replaceAll('/', '.') ?? ''}`;
  if (first?.keyword === 'additionalProperties') {
    return {
      code: 'unknown_field',
      message: `${where}.${String(first.params.additionalProperty)} is not a known field`,
    };
  }
  if (first?.keyword === 'required') {
    return {
      code: 'invalid_request',
      message: `${where}.${String(first.params.missingProperty)} is required`,
    };
  }
  return { code: 'invalid_request', message: `${where} ${first?.message ?? 'is invalid'}` };
}

/** Maps any thrown value to a status, headers and body. Unknown errors are 500s. */
export function toErrorReply(err: unknown): {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
} {
  if (err instanceof StepUpRequiredError) {
    return { status: 428, headers: {}, body: { error: 'step_up_required' } };
  }
  if (err instanceof ApiError) {
    return { status: err.statusCode, headers: err.headers, body: { error: err.code, message: err.message } };
  }
  const e = (err ?? {}) as FrameworkError;
  if (e.validation) {
    const { code, message } = validationMessage(e);
    return { status: 400, headers: {}, body: { error: code, message } };
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return {
      status: 415,
      headers: {},
      body: { error: 'unsupported_media_type', message: 'send the body as Content-Type: application/json' },
    };
  }
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return {
      status: 413,
      headers: {},
      body: { error: 'payload_too_large', message: 'request body is larger than the server accepts' },
    };
  }
  const status = e.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, headers: {}, body: { error: 'bad_request', message: e.message } };
  }
  return { status: 500, headers: {}, body: { error: 'internal_error', message: 'internal server error' } };
}
