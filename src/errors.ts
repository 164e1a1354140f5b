/**
 * The one error-code table. Domain code throws `AppError(code, message)`; REST maps the code to
 * a status and the CONTRACT 5 envelope, GraphQL maps it to `extensions.code`. Nothing else
 * decides statuses.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, graphql: 'BAD_USER_INPUT' },
  unauthorized: { status: 401, graphql: 'UNAUTHENTICATED' },
  session_required: { status: 401, graphql: 'UNAUTHENTICATED' },
  insufficient_scope: { status: 403, graphql: 'FORBIDDEN' },
  forbidden: { status: 403, graphql: 'FORBIDDEN' },
  not_found: { status: 404, graphql: 'NOT_FOUND' },
  claim_conflict: { status: 409, graphql: 'CLAIM_CONFLICT' },
  invalid_transition: { status: 409, graphql: 'INVALID_TRANSITION' },
  token_limit_reached: { status: 409, graphql: 'BAD_USER_INPUT' },
  request_timeout: { status: 408, graphql: 'BAD_USER_INPUT' },
  payload_too_large: { status: 413, graphql: 'BAD_USER_INPUT' },
  unsupported_media_type: { status: 415, graphql: 'BAD_USER_INPUT' },
  rate_limited: { status: 429, graphql: 'RATE_LIMITED' },
  internal: { status: 500, graphql: 'INTERNAL_SERVER_ERROR' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** Extra response headers (WWW-Authenticate, Retry-After); REST only. */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'AppError'
  }

  get status(): number {
    return ERROR_CODES[this.code].status
  }
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: unknown }
}

export function envelope(code: ErrorCode, message: string, details?: unknown): ErrorEnvelope {
  return { error: details === undefined ? { code, message } : { code, message, details } }
}

export const invalid = (message: string, details?: unknown) => new AppError('invalid_request', message, details)
export const notFound = (what = 'Item') => new AppError('not_found', `${what} not found.`)
