import { Elysia } from 'elysia'
import { AppError, challengeHeaders, envelope, type ErrorCode } from '../errors'
import { restSpelling } from './serialize'
import type { Logger } from '../logger'
import { loggedPath } from './observability'

function json(
  status: number,
  code: ErrorCode,
  message: string,
  details?: unknown,
  headers: Record<string, string> = {},
) {
  return new Response(JSON.stringify(envelope(code, message, details)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  })
}

type SchemaLike = {
  anyOf?: SchemaLike[]
  enum?: unknown[]
  const?: unknown
  type?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  maxItems?: number
  minItems?: number
  pattern?: string
  format?: string
}

const WHERE: Record<string, string> = {
  query: 'query parameter',
  params: 'path parameter',
  body: 'body property',
  headers: 'header',
  cookie: 'cookie',
}

/** The values a union of literals (or an enum) allows, `null` included when it is one of them. */
function allowedValues(schema: SchemaLike | undefined): unknown[] | undefined {
  if (!schema) return undefined
  if (Array.isArray(schema.enum)) return schema.enum
  if (schema.anyOf?.length) {
    const values: unknown[] = []
    for (const branch of schema.anyOf) {
      if ('const' in branch) values.push(branch.const)
      else if (branch.type === 'null') values.push(null)
      else {
        const nested = allowedValues(branch)
        if (!nested) return undefined
        values.push(...nested)
      }
    }
    return values
  }
  return undefined
}

/** What the schema asks for, in words: the same sentence in development and production. */
function expectation(
  schema: SchemaLike | undefined,
  allowed: unknown[] | undefined,
  fallback: string,
): string {
  if (allowed) return `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
  // Elysia's numeric query schemas are "a number, or a string of one": describe the number.
  const numeric = schema?.anyOf?.find((b) => b.type === 'integer' || b.type === 'number') ?? schema
  if (numeric?.type === 'integer' || numeric?.type === 'number') {
    const kind = numeric.type === 'integer' ? 'a whole number' : 'a number'
    const min = numeric.minimum ?? schema?.minimum
    const max = numeric.maximum ?? schema?.maximum
    return min !== undefined && max !== undefined
      ? `must be ${kind} from ${min} to ${max}`
      : `must be ${kind}`
  }
  if (schema?.type === 'string') {
    if (schema.maxLength !== undefined)
      return `must be a string of at most ${schema.maxLength} characters`
    if (schema.minLength !== undefined)
      return `must be a string of at least ${schema.minLength} characters`
    if (schema.pattern) return `must match ${schema.pattern}`
    return 'must be a string'
  }
  if (schema?.type === 'array' && schema.maxItems !== undefined)
    return `must be a list of at most ${schema.maxItems} values`
  return fallback.replace(/^Expected/, 'expected').replace(/\.$/, '')
}

/**
 * Elysia's validation error, rendered from its structured form (where, which path, which
 * schema) rather than from its message text, whose content depends on NODE_ENV: the same
 * answer in development and production, always naming the field.
 */
function validationDetails(
  error: unknown,
  url: URL,
): { message: string; details: Record<string, unknown> } {
  const e = error as {
    type?: string
    value?: unknown
    valueError?: { path?: string; message?: string; schema?: SchemaLike }
  }
  let where = e.type ?? 'request'
  const path = e.valueError?.path ?? ''
  let field = path && path !== '/' ? path.replace(/^\//, '').replaceAll('/', '.') : null
  if (where === 'property') {
    // A number in the query string that parsed but broke a bound (limit=0): Elysia throws the
    // inner check's error, which lost the parameter's name. It is the query parameter whose
    // value parses to the refused number.
    const match = [...url.searchParams].find(
      ([, value]) => value.trim() !== '' && Number(value) === e.value,
    )
    where = 'query'
    field = match?.[0] ?? null
  }
  const schema = e.valueError?.schema
  const rawMessage = e.valueError?.message ?? 'Invalid value'
  const allowed = allowedValues(schema)
  const details: Record<string, unknown> = { in: where, field }
  if (allowed) details.allowed = allowed
  if (/required property/i.test(rawMessage)) {
    return {
      message: `Missing ${WHERE[where] ?? where} "${field}".`,
      details: { ...details, problem: 'missing' },
    }
  }
  if (/unexpected property/i.test(rawMessage)) {
    return {
      message: `Unknown ${WHERE[where] ?? where} "${field}".`,
      details: { ...details, problem: 'unknown' },
    }
  }
  const label = field ? `${WHERE[where] ?? where} "${field}"` : `${where}`
  return { message: `Invalid ${label}: ${expectation(schema, allowed, rawMessage)}.`, details }
}

/** Our coded error in REST's terms: status, envelope with snake_case field names, challenge headers. */
export function appErrorResponse(error: AppError): Response {
  const { message, details } = error.spelled(restSpelling)
  return json(error.status, error.code, message, details, challengeHeaders(error))
}

/**
 * The one REST error mapper: every failure, ours or Elysia's, leaves as the CONTRACT 5 envelope.
 * Unknown failures are logged with the request id and answered as a bare 500.
 */
export function errorMapper(logger: Logger) {
  return new Elysia().onError({ as: 'global' }, ({ code, error, request }) => {
    // Elysia wraps whatever a body parser throws in a ParseError; ours carry the real answer.
    const cause = code === 'PARSE' ? (error as Error).cause : undefined
    const ours = cause instanceof AppError ? cause : error instanceof AppError ? error : undefined
    if (ours) return appErrorResponse(ours)
    switch (code) {
      case 'VALIDATION': {
        const { message, details } = validationDetails(error, new URL(request.url))
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
