import { Elysia } from 'elysia'
import { cors } from '@elysiajs/cors'
import type { Logger } from '../logger'
import { envelope } from '../errors'

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/** A host as a Host header may name it: a DNS name (underscores allowed, as in container names), IPv4, or [IPv6]; optional port. */
const HOST =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/**
 * The request's URL when it is one this app can route, else null. Bun builds `request.url` from
 * the Host header: without one (HTTP/1.0, `Host:` empty) it is a bare path, and a malformed one
 * makes it unparsable. Only `http:` is accepted because Elysia finds the path as the first `/`
 * after `http://` (`handler.standardHostname: false` in app.ts; its default skips 11 characters,
 * which let a 1–3 character Host route `/<junk>/api/saved/…` to the real route).
 */
export function routableUrl(request: Request): URL | null {
  const raw = request.url
  if (!raw.startsWith('http://')) return null
  // The authority exactly as Elysia will skip it: everything up to the first '/'. A Host such as
  // `a?x` or `a#x` would otherwise make the parsed URL's path differ from the routed one.
  const pathStart = raw.indexOf('/', 7)
  if (pathStart === -1 || !HOST.test(raw.slice(7, pathStart))) return null
  try {
    return new URL(raw)
  } catch {
    return null
  }
}

/** The path to log for a request whose URL may be malformed; never throws. */
export function loggedPath(request: Request): string {
  return routableUrl(request)?.pathname ?? '(malformed request)'
}

/**
 * Request ids (`x-request-id` in and out), one structured log line per request, and the
 * security headers every answer carries. Log lines hold method, path (no query string),
 * status and timing — never a header, body or token.
 */
export function observability() {
  return new Elysia().onRequest(({ request, set }) => {
    const incoming = request.headers.get('x-request-id')
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
    const url = routableUrl(request)
    const path = url?.pathname ?? '(malformed request)'
    set.headers['x-request-id'] = id
    set.headers['x-content-type-options'] = 'nosniff'
    set.headers['x-frame-options'] = 'DENY'
    set.headers['referrer-policy'] = 'no-referrer'
    // /graphql too: its answers hold the same data, and createAgentToken's holds a secret.
    if (!url || path.startsWith('/api/') || path === '/graphql')
      set.headers['cache-control'] = 'no-store'
    if (!url) {
      // Answered before routing: a request we cannot place must not reach any route.
      return new Response(
        JSON.stringify(envelope('invalid_request', 'The Host header is missing or malformed.')),
        {
          status: 400,
          headers: {
            ...(set.headers as Record<string, string>),
            'content-type': 'application/json; charset=utf-8',
          },
        },
      )
    }
  })
}

/**
 * One log line per request, written around the whole app so it records the status actually
 * sent — whichever layer answered (route, validation, error mapper, GraphQL, idempotency).
 */
export function logRequests(logger: Logger, handle: (request: Request) => Promise<Response>) {
  // LOG_LEVEL above info: nothing to write, so nothing to measure per request.
  if (!logger.enabled('info')) return handle
  return async (request: Request): Promise<Response> => {
    const at = performance.now()
    const response = await handle(request)
    logger.info('request', {
      request_id: response.headers.get('x-request-id') ?? undefined,
      method: request.method,
      path: routableUrl(request)?.pathname ?? '(malformed request)',
      status: response.status,
      duration_ms: Math.round((performance.now() - at) * 10) / 10,
    })
    return response
  }
}

/** Browsers may call from the configured origins only; without CORS_ORIGINS there are no CORS headers. */
export function corsPolicy(origins: string[]) {
  if (origins.length === 0) return new Elysia()
  return cors({
    origin: origins.includes('*') ? true : origins,
    methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    // mcp-protocol-version: browser MCP clients send it on every /mcp request after the first.
    allowedHeaders: [
      'authorization',
      'content-type',
      'x-request-id',
      'idempotency-key',
      'last-event-id',
      'mcp-protocol-version',
    ],
    // www-authenticate: browser MCP clients read the 401 challenge to find the RFC 9728 metadata.
    exposeHeaders: [
      'x-request-id',
      'retry-after',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'www-authenticate',
      'idempotent-replayed',
    ],
    credentials: false,
    maxAge: 600,
  })
}
