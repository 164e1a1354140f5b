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
  quota_exceeded: { status: 403, graphql: 'FORBIDDEN' },
  not_found: { status: 404, graphql: 'NOT_FOUND' },
  claim_conflict: { status: 409, graphql: 'CLAIM_CONFLICT' },
  invalid_transition: { status: 409, graphql: 'INVALID_TRANSITION' },
  lease_lost: { status: 409, graphql: 'LEASE_LOST' },
  token_limit_reached: { status: 409, graphql: 'BAD_USER_INPUT' },
  webhook_limit_reached: { status: 409, graphql: 'BAD_USER_INPUT' },
  idempotency_key_in_flight: { status: 409, graphql: 'CONFLICT' },
  request_timeout: { status: 408, graphql: 'BAD_USER_INPUT' },
  payload_too_large: { status: 413, graphql: 'BAD_USER_INPUT' },
  unsupported_media_type: { status: 415, graphql: 'BAD_USER_INPUT' },
  idempotency_key_reused: { status: 422, graphql: 'BAD_USER_INPUT' },
  rate_limited: { status: 429, graphql: 'RATE_LIMITED' },
  internal: { status: 500, graphql: 'INTERNAL_SERVER_ERROR' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class AppError extends Error {
  /**
   * For input errors: the field in domain spelling (`leaseSeconds`, `corrections.tags`) and the
   * rule it broke, so each front end can say the same sentence in its own spelling.
   */
  field?: { name: string; rule: string }

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** Extra response headers (WWW-Authenticate, Retry-After) from the HTTP-facing auth layer. */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'AppError'
  }

  get status(): number {
    return ERROR_CODES[this.code].status
  }

  /** The message and details with the field spelled by a front end (`lease_seconds`, `first`). */
  spelled(spell: (field: string) => string): { message: string; details: unknown } {
    if (!this.field) return { message: this.message, details: this.details }
    const name = spell(this.field.name)
    return {
      message: `${name} ${this.field.rule}.`,
      details: { ...(this.details as object), field: name },
    }
  }
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: unknown }
}

export function envelope(code: ErrorCode, message: string, details?: unknown): ErrorEnvelope {
  return { error: details === undefined ? { code, message } : { code, message, details } }
}

export const invalid = (message: string, details?: unknown) =>
  new AppError('invalid_request', message, details)
export const notFound = (what = 'Item') => new AppError('not_found', `${what} not found.`)

/** A field broke a rule: "leaseSeconds must be a whole number from 1 to 86400." */
export function invalidField(
  name: string,
  rule: string,
  extra?: Record<string, unknown>,
): AppError {
  const error = new AppError('invalid_request', `${name} ${rule}.`, { ...extra, field: name })
  error.field = { name, rule }
  return error
}

/** RFC 6750 challenges, built from the error code by the HTTP and GraphQL mappers alike. */
export function challengeHeaders(error: AppError): Record<string, string> | undefined {
  if (error.headers) return error.headers
  const realm = 'Bearer realm="saved"'
  if (error.code === 'insufficient_scope') {
    const scope = (error.details as { required_scope?: string } | undefined)?.required_scope
    return {
      'WWW-Authenticate': `${realm}, error="insufficient_scope"${scope ? `, scope="${scope}"` : ''}`,
    }
  }
  if (error.code === 'session_required') {
    return {
      'WWW-Authenticate': `${realm}, error="invalid_token", error_description="session required"`,
    }
  }
  if (error.code === 'unauthorized') return { 'WWW-Authenticate': realm }
  const retry = (error.details as { retry_after_seconds?: number } | undefined)?.retry_after_seconds
  if (error.code === 'rate_limited' && retry) return { 'Retry-After': String(retry) }
  return undefined
}
