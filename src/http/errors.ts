import { Elysia } from 'elysia'
import { AppError, envelope, type ErrorCode } from '../errors'
import type { Logger } from '../logger'
import { loggedPath } from './observability'

function json(status: number, code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(envelope(code, message, details)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  })
}

/** Elysia's validation error as a short, safe description: where, which property, what was expected. */
function validationDetails(error: unknown): { message: string; details: unknown } {
  try {
    const parsed = JSON.parse((error as Error).message) as { on?: string; property?: string; summary?: string; message?: string }
    const where = parsed.on === 'property' ? 'request' : parsed.on
    const property = parsed.property && parsed.property !== 'root' ? parsed.property.replace(/^\//, '').replace(/\//g, '.') : undefined
    const summary = parsed.summary ?? parsed.message ?? 'Invalid value'
    return {
      message: `Invalid ${where ?? 'request'}${property ? ` property "${property}"` : ''}: ${summary}.`.replace(/\.\.$/, '.'),
      details: { in: where, property: property ?? null },
    }
  } catch {
    return { message: 'The request is invalid.', details: undefined }
  }
}

/**
 * The one REST error mapper: every failure, ours or Elysia's, leaves as the CONTRACT 5 envelope.
 * Unknown failures are logged with the request id and answered as a bare 500.
 */
export function errorMapper(logger: Logger) {
  return new Elysia().onError({ as: 'global' }, ({ code, error, request }) => {
    // Elysia wraps whatever a body parser throws in a ParseError; ours carry the real answer.
    const cause = code === 'PARSE' ? (error as Error).cause : undefined
    if (cause instanceof AppError) return json(cause.status, cause.code, cause.message, cause.details, cause.headers)
    if (error instanceof AppError) return json(error.status, error.code, error.message, error.details, error.headers)
    switch (code) {
      case 'VALIDATION': {
        const { message, details } = validationDetails(error)
        return json(400, 'invalid_request', message, details)
      }
      case 'PARSE':
        return json(400, 'invalid_request', 'The request body could not be parsed.')
      case 'NOT_FOUND':
        return json(404, 'not_found', 'No such route.')
      case 'INVALID_COOKIE_SIGNATURE':
      case 'INVALID_FILE_TYPE':
        return json(400, 'invalid_request', 'The request is invalid.')
    }
    logger.error('unhandled error', {
      request_id: request.headers.get('x-request-id') ?? undefined,
      path: loggedPath(request),
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    })
    return json(500, 'internal', 'Something went wrong on our side.')
  })
}
