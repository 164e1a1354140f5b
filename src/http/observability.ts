import { Elysia } from 'elysia'
import { cors } from '@elysiajs/cors'
import type { Logger } from '../logger'

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/**
 * Request ids (`x-request-id` in and out), one structured log line per request, and the
 * security headers every answer carries. Log lines hold method, path (no query string),
 * status and timing — never a header, body or token.
 */
export function observability() {
  return new Elysia()
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
      const path = new URL(request.url).pathname
      set.headers['x-request-id'] = id
      set.headers['x-content-type-options'] = 'nosniff'
      set.headers['x-frame-options'] = 'DENY'
      set.headers['referrer-policy'] = 'no-referrer'
      if (path.startsWith('/api/')) set.headers['cache-control'] = 'no-store'
    })
}

/**
 * One log line per request, written around the whole app so it records the status actually
 * sent — whichever layer answered (route, validation, error mapper, GraphQL, idempotency).
 */
export function logRequests(logger: Logger, handle: (request: Request) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    const at = performance.now()
    const response = await handle(request)
    logger.info('request', {
      request_id: response.headers.get('x-request-id') ?? undefined,
      method: request.method,
      path: new URL(request.url).pathname,
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
    allowedHeaders: ['authorization', 'content-type', 'x-request-id', 'mcp-protocol-version'],
    // www-authenticate: browser MCP clients read the 401 challenge to find the RFC 9728 metadata.
    exposeHeaders: ['x-request-id', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'www-authenticate'],
    credentials: false,
    maxAge: 600,
  })
}
