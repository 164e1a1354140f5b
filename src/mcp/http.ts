import { Elysia } from 'elysia'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { CallerResolver } from '../auth/caller'
import { rateHeaders, type CallerRateLimiter, type RateDecision } from '../auth/rate-limit'
import { AGENT_TOKEN_SCOPES, type Caller } from '../domain/caller'
import type { Deps } from '../domain/deps'
import { AppError } from '../errors'
import { appErrorResponse } from '../http/errors'
import { clientAddress } from '../http/auth'
import { readBody } from '../http/body'
import { createMcpServer } from './server'

export interface McpRouteDeps {
  deps: Deps
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
  /** CONTRACT 10: every body is bounded, this one too. */
  maxBodyBytes: number
  /** A body must arrive within this. */
  bodyTimeoutMs: number
}

/**
 * Rate-limit draws for a JSON-RPC message or batch: one per tool call (CONTRACT 10, one draw
 * per operation), at least one per request.
 */
function toolCalls(bytes: Uint8Array): number {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes))
    const messages = Array.isArray(parsed) ? parsed : [parsed]
    const calls = messages.filter(
      (m) => (m as { method?: unknown } | null)?.method === 'tools/call',
    )
    return Math.max(1, calls.length)
  } catch {
    return 1
  }
}

const METADATA_PATH = '/.well-known/oauth-protected-resource'

/** RFC 9728: where a client learns how to get a token for `resource` (bearer in the header, these scopes). */
const resourceMetadata = (request: Request, path: string) => {
  const origin = new URL(request.url).origin
  return Response.json({
    resource: `${origin}${path}`,
    bearer_methods_supported: ['header'],
    scopes_supported: AGENT_TOKEN_SCOPES,
    resource_name: 'Saved-Items Workflow API',
  })
}

/** REST's error answer, plus RFC 9728's pointer to the metadata in a 401 challenge. */
function refuse(error: AppError, request: Request): Response {
  const response = appErrorResponse(error)
  const challenge = response.headers.get('www-authenticate')
  if (error.status === 401 && challenge) {
    response.headers.set(
      'www-authenticate',
      `${challenge}, resource_metadata="${new URL(request.url).origin}${METADATA_PATH}/mcp"`,
    )
  }
  return response
}

/** JSON unless the client lists SSE first: every MCP client accepts both, JSON is simpler to proxy and log. */
const prefersSse = (accept: string | null) =>
  ((accept ?? '').split(',')[0] ?? '').trim().toLowerCase().startsWith('text/event-stream')

/**
 * `/mcp`, stateless Streamable HTTP (CONTRACT 9): each POST authenticates, builds a server for
 * its caller, answers and forgets it, so any request can land on any process. There is no
 * session to resume, so GET (a standalone event stream) and DELETE (ending a session) are 405.
 */
export function mcpRoutes({
  deps,
  resolveCaller,
  rateLimit,
  maxBodyBytes,
  bodyTimeoutMs,
}: McpRouteDeps) {
  async function handle(incoming: Request, client: string): Promise<Response> {
    let caller: Caller
    let decision: RateDecision | null
    let request = incoming
    try {
      // Authenticated before the body is read; failed attempts count against the client's address.
      caller = await resolveCaller(incoming.headers.get('authorization'), client)
      let cost = 1
      if (incoming.method === 'POST') {
        const bytes = await readBody(incoming, maxBodyBytes, bodyTimeoutMs)
        cost = toolCalls(bytes)
        request = new Request(incoming.url, {
          method: 'POST',
          headers: incoming.headers,
          body: bytes as Uint8Array<ArrayBuffer>,
          signal: incoming.signal,
        })
      }
      decision = await rateLimit(caller, cost)
    } catch (error) {
      if (error instanceof AppError) return refuse(error, incoming)
      throw error
    }
    if (request.method !== 'POST') {
      return Response.json(
        {
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: 'Method not allowed: this MCP server is stateless; send POST.',
          },
          id: null,
        },
        { status: 405, headers: { allow: 'POST' } },
      )
    }
    const server = createMcpServer(deps, caller)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !prefersSse(request.headers.get('accept')),
      maxRequestBodySize: maxBodyBytes,
    })
    await server.connect(transport)
    // A client that goes away cancels its calls (a claim_next wait ends at once).
    const close = () => void server.close()
    request.signal.addEventListener('abort', close, { once: true })
    const response = await transport.handleRequest(request)
    // A JSON answer is complete here; an event stream closes itself after its last response.
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      request.signal.removeEventListener('abort', close)
      close()
    }
    if (decision)
      for (const [name, value] of Object.entries(rateHeaders(decision)))
        response.headers.set(name, value)
    return response
  }

  return new Elysia()
    .all('/mcp', ({ request, server }) => handle(request, clientAddress(server, request)), {
      parse: 'none',
      detail: { hide: true },
    })
    .get(METADATA_PATH, ({ request }) => resourceMetadata(request, ''), { detail: { hide: true } })
    .get(`${METADATA_PATH}/mcp`, ({ request }) => resourceMetadata(request, '/mcp'), {
      detail: { hide: true },
    })
}
