import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import {
  AgentTokenListSchema,
  AgentTokenSchema,
  ClaimantSchema,
  CreateAgentTokenBody,
  CreatedAgentTokenSchema,
  CreateItemBody,
  ErrorSchema,
  HistorySchema,
  ItemSchema,
  ItemWithImageSchema,
  PageSchema,
  PatchItemBody,
  ClaimNextBody,
  ClaimNextSchema,
  LeaseSchema,
} from './schemas'

export const API_INFO = {
  title: 'Saved-Items Workflow API',
  version: '0.2.0',
  description:
    'Saved items wait for action; personal agents claim and finish them. Authenticate with `Authorization: Bearer <token>`: ' +
    'a session JWT, or a personal agent token (`sat_…`) with scopes `read_items` and/or `update_workflow_status`. ' +
    'The inbox holds only items with a `requested_action`. GraphQL: [/graphql](/graphql).',
}

const TAGS = [
  { name: 'items', description: 'Saved items' },
  { name: 'workflow', description: 'Claims, statuses, history and the inbox' },
  { name: 'agent tokens', description: 'Personal agent tokens (signed-in session only)' },
  { name: 'files', description: 'Stored images behind signed links' },
  { name: 'system', description: 'Liveness and readiness' },
  { name: 'graphql', description: 'The same service through GraphQL' },
]

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }
type Operation = JsonObject & {
  operationId?: string
  security?: Json[]
  parameters?: (JsonObject & { name: string; in: string })[]
  responses?: Record<string, JsonObject & { headers?: JsonObject; content?: JsonObject }>
}
export type Spec = JsonObject & {
  paths: Record<string, Record<string, Operation>>
  components: JsonObject & { schemas: JsonObject }
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value))
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The named component schemas, from the very schemas the routes document (and the tests check
 * real answers against). Every inline copy of one in the document becomes a `$ref`, so
 * generators emit `Item`, `ItemPage`, … instead of anonymous shapes.
 */
function namedSchemas(): Record<string, unknown> {
  const history = clone(HistorySchema) as { properties?: { events?: { items?: unknown } } }
  return {
    Error: ErrorSchema,
    Claimant: ClaimantSchema,
    Item: ItemSchema,
    ItemWithImage: ItemWithImageSchema,
    ItemPage: PageSchema,
    History: HistorySchema,
    ...(history.properties?.events?.items ? { HistoryEvent: history.properties.events.items } : {}),
    AgentToken: AgentTokenSchema,
    AgentTokenList: AgentTokenListSchema,
    CreatedAgentToken: CreatedAgentTokenSchema,
    CreateItem: CreateItemBody,
    UpdateItem: PatchItemBody,
    ClaimNext: ClaimNextBody,
    ClaimNextResult: ClaimNextSchema,
    Lease: LeaseSchema,
    CreateAgentToken: CreateAgentTokenBody,
  }
}

/**
 * Precise scalar types. Elysia documents `t.Integer` as "integer, or a string of one" (its
 * query coercion), which generators turn into `string | number` — but a string lease is
 * refused. Unions of string literals become `enum`s, which every generator reads.
 */
export function preciseSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(preciseSchema)
  if (!isObject(node)) return node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) out[key] = preciseSchema(value)
  // Ranges the domain checks (src/http/schemas.ts `range`) are documented as plain bounds.
  if ('x-minimum' in out) (out.minimum = out['x-minimum']), delete out['x-minimum']
  if ('x-maximum' in out) (out.maximum = out['x-maximum']), delete out['x-maximum']
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.every(isObject)) {
    const branches = anyOf as JsonObject[]
    const { anyOf: _, ...outer } = out
    const numeric = branches.find((b) => b.type === 'integer' || b.type === 'number')
    const numericString = branches.find(
      (b) => b.type === 'string' && (b.format === 'integer' || b.format === 'numeric'),
    )
    if (branches.length === 2 && numeric && numericString) return { ...outer, ...numeric }
    if (
      branches.length > 0 &&
      branches.every(
        (b) => b.type === 'string' && typeof b.const === 'string' && Object.keys(b).length === 2,
      )
    ) {
      return { ...outer, type: 'string', enum: branches.map((b) => b.const as string) }
    }
  }
  return out
}

/** Key-order-independent identity of a schema. */
const canonical = (node: Json): string =>
  Array.isArray(node)
    ? `[${node.map(canonical).join(',')}]`
    : isObject(node)
      ? `{${Object.keys(node)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical(node[k] ?? null)}`)
          .join(',')}}`
      : JSON.stringify(node)

/** Replaces, top-down, every subtree equal to a named schema with a `$ref` to it. */
function refNamed(node: Json, byIdentity: Map<string, string>, self?: string): Json {
  if (Array.isArray(node)) return node.map((n) => refNamed(n, byIdentity))
  if (!isObject(node)) return node
  const name = byIdentity.get(canonical(node))
  if (name && name !== self) return { $ref: `#/components/schemas/${name}` }
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) out[key] = refNamed(value, byIdentity)
  return out
}

/**
 * Stable operation ids, which generated clients use as method names. The table fixes the
 * public ones (including routes still to come, so they get their intended names); any other
 * route gets `verb` + its path words, e.g. `GET /api/saved/items/{id}/notes` → `getItemNotes`.
 */
const OPERATION_IDS: Record<string, string> = {
  'POST /mcp': 'mcp',
  'GET /health': 'health',
  'GET /ready': 'ready',
  'GET /api/saved/items': 'listItems',
  'POST /api/saved/items': 'createItem',
  'GET /api/saved/items/{id}': 'getItem',
  'PATCH /api/saved/items/{id}': 'updateItem',
  'DELETE /api/saved/items/{id}': 'deleteItem',
  'GET /api/saved/items/{id}/history': 'getItemHistory',
  'GET /api/saved/inbox': 'listInbox',
  'POST /api/saved/inbox/claim': 'claimNextItem',
  'GET /api/saved/agent-tokens': 'listAgentTokens',
  'POST /api/saved/agent-tokens': 'createAgentToken',
  'DELETE /api/saved/agent-tokens/{id}': 'revokeAgentToken',
  'GET /api/saved/changes': 'listChanges',
  'GET /api/saved/events': 'streamEvents',
  'GET /api/saved/webhooks': 'listWebhooks',
  'POST /api/saved/webhooks': 'createWebhook',
  'DELETE /api/saved/webhooks/{id}': 'deleteWebhook',
  'GET /api/saved/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /files/images/{key}': 'getImageFile',
  'POST /graphql': 'graphql',
  'GET /graphql': 'graphiql',
}

const VERBS: Record<string, string> = {
  get: 'get',
  post: 'create',
  put: 'replace',
  patch: 'update',
  delete: 'delete',
}
const words = (segment: string) =>
  segment
    .split(/[-_.]/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))

export function operationIdFor(method: string, path: string): string {
  const known = OPERATION_IDS[`${method.toUpperCase()} ${path}`]
  if (known) return known
  const segments = path
    .replace(/^\/api\/saved(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
  const name = segments
    .map((segment, i) => {
      if (segment.startsWith('{')) return ''
      // A collection followed by an id names one member of it: items/{id} → Item.
      const singular = segments[i + 1]?.startsWith('{') ? segment.replace(/s$/, '') : segment
      return words(singular).join('')
    })
    .join('')
  return `${VERBS[method.toLowerCase()] ?? method.toLowerCase()}${name || 'Root'}`
}

const header = (description: string, schema: JsonObject, required = false): JsonObject => ({
  description,
  required,
  schema,
})
const HEADERS: JsonObject = {
  'RateLimit-Limit': header('Requests a minute allowed to this caller.', {
    type: 'integer',
    minimum: 0,
  }),
  'RateLimit-Remaining': header('Requests left in the current window.', {
    type: 'integer',
    minimum: 0,
  }),
  'RateLimit-Reset': header('Seconds until the bucket is full again.', {
    type: 'integer',
    minimum: 0,
  }),
  'Retry-After': header(
    'Seconds to wait before the next request fits.',
    { type: 'integer', minimum: 0 },
    true,
  ),
  'WWW-Authenticate': header(
    'RFC 6750 challenge, e.g. `Bearer error="insufficient_scope", scope="read_items"`.',
    { type: 'string' },
    true,
  ),
  'Idempotent-Replayed': header(
    '`true` when this answer is the replay of an earlier request with the same `Idempotency-Key`.',
    { type: 'string', enum: ['true'] },
  ),
  'X-Request-Id': header(
    'Yours, when it is a safe token, or a new UUID; it is in the log line of this request.',
    { type: 'string' },
  ),
}
const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` })

const graphqlResult: JsonObject = {
  type: 'object',
  description:
    'A GraphQL result. The schema is in schema/schema.graphql; errors carry extensions.code.',
  properties: {
    data: { anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }] },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: {
          message: { type: 'string' },
          path: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          extensions: {
            type: 'object',
            additionalProperties: true,
            properties: {
              code: {
                type: 'string',
                description:
                  'UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CLAIM_CONFLICT, INVALID_TRANSITION, BAD_USER_INPUT, …',
              },
              reason: { type: 'string', description: 'The REST error code.' },
            },
          },
        },
      },
    },
  },
}

function graphqlPath(): Record<string, Operation> {
  const result = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/GraphQLResult' } } },
  })
  return {
    post: {
      summary:
        'GraphQL: queries items, item, inbox, agentTokens, changes, webhooks; mutations createItem, updateItem, claimNext, deleteItem, createAgentToken, revokeAgentToken, createWebhook, deleteWebhook; subscription itemChanged (Accept: text/event-stream)',
      tags: ['graphql'],
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['query'],
              properties: {
                query: { type: 'string' },
                // Any JSON values: an object with no listed properties would type as `{}`-only.
                variables: {
                  anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }],
                },
                operationName: { anyOf: [{ type: 'string' }, { type: 'null' }] },
              },
            },
          },
        },
      },
      responses: {
        200: result('A GraphQL result: { data, errors }.'),
        400: result('A malformed or invalid GraphQL request.'),
        401: result('Missing or bad credentials (extensions.code UNAUTHENTICATED).'),
        413: result('Body over MAX_JSON_BODY_BYTES.'),
        415: result('The body is not application/json.'),
        429: result('Rate limited (extensions.code reason rate_limited).'),
        500: result('Internal error.'),
      },
    },
    get: {
      summary: 'GraphiQL in a browser (Accept: text/html), or a query in the query string',
      tags: ['graphql'],
      parameters: [
        { name: 'query', in: 'query', required: false, schema: { type: 'string' } },
        {
          name: 'variables',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'JSON.',
        },
        { name: 'operationName', in: 'query', required: false, schema: { type: 'string' } },
      ],
      responses: {
        200: {
          description: 'GraphiQL page (Accept: text/html, no query), or a GraphQL result.',
          content: {
            'text/html': { schema: { type: 'string' } },
            'application/json': { schema: { $ref: '#/components/schemas/GraphQLResult' } },
          },
        },
        400: result('A malformed or invalid GraphQL request.'),
        401: result('Missing or bad credentials (extensions.code UNAUTHENTICATED).'),
        405: result('A mutation over GET: send it with POST.'),
        429: result('Rate limited.'),
      },
    },
  }
}

/** `/mcp`, served by the MCP SDK's transport (JSON-RPC); documented so the document lists every route. */
function mcpPath(): Record<string, Operation> {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  })
  return {
    post: {
      summary: 'Model Context Protocol (Streamable HTTP, stateless): JSON-RPC tools for agents',
      description:
        'Tools: whoami, inbox_list, item_get, claim_next, lease_renew, lease_release, item_complete, item_add_note (listed per scope). See the README, section MCP.',
      tags: ['mcp'],
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: { description: 'A JSON-RPC 2.0 message or batch.' } },
        },
      },
      responses: {
        200: {
          description:
            'JSON-RPC answers, as JSON or an event stream (text/event-stream) when the client lists it first in Accept.',
          content: {
            'application/json': {
              schema: { description: 'A JSON-RPC 2.0 answer or batch of answers.' },
            },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        202: { description: 'A notification or answer from the client: nothing to send back.' },
        401: error('Missing or bad credentials (WWW-Authenticate with resource_metadata).'),
        413: error('Body over MAX_JSON_BODY_BYTES.'),
        429: error('Rate limited: one draw per tool call.'),
      },
    },
  }
}

const WRITE_METHODS = new Set(['post', 'patch', 'put', 'delete'])

/**
 * What the generator cannot know from the route schemas, added after it: named schemas,
 * operation ids, servers, headers, precise scalars, and the GraphQL endpoint.
 *
 * The Markdown alternative (`format=md`, or `Accept: text/markdown`) is described on the
 * `format` parameter, not declared as a second 200 content type: openapi-fetch and most
 * generators would otherwise type every answer as `Page | string`.
 */
export function completeSpec(raw: unknown, options: { publicUrl?: string } = {}): Spec {
  const spec = preciseSchema(clone(raw as Json)) as Spec
  spec.servers = [
    {
      url: options.publicUrl ?? '/',
      description: options.publicUrl ? 'This deployment' : 'The server that serves this document',
    },
  ]
  spec.paths = { ...spec.paths, '/graphql': graphqlPath(), '/mcp': mcpPath() }

  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      op.operationId = operationIdFor(method, path)
      for (const parameter of op.parameters ?? []) {
        if (parameter.name === 'format' && parameter.in === 'query') {
          parameter.description =
            '`json` (default) or `md`: `md` answers `text/markdown; charset=utf-8`, a readable document. ' +
            '`Accept: text/markdown` does the same without the parameter. The Markdown answer is not declared as a response ' +
            'content type so that generated clients keep the JSON type of the 200.'
        }
      }
      if (path === '/api/saved/events' && method === 'get') {
        ;((op as { parameters?: unknown[] }).parameters ??= []).push({
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description:
            'The id (seq) of the last event received: the stream resumes right after it (wins over ?after=).',
          schema: { type: 'string' },
        })
      }
      // Idempotency-Key is honoured on writes under /api/saved/, except token creation (its secret is never stored).
      if (path.startsWith('/api/saved/') && WRITE_METHODS.has(method)) {
        const parameters = ((op as { parameters?: unknown[] }).parameters ??= [])
        parameters.push({
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            op.operationId === 'createAgentToken'
              ? 'Refused (400): the answer holds a secret that is never stored, so it cannot be replayed.'
              : '1 to 255 printable ASCII characters, per caller, kept 24 hours: a repeat of the same request replays the first answer (Idempotent-Replayed: true); another request with the key is 422; a repeat while the first runs is 409.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        })
      }
      // A body that does not arrive within BODY_TIMEOUT_SECONDS is refused (slowly trickled bodies).
      if (op.requestBody && op.responses && !op.responses['408']) {
        op.responses['408'] = {
          description: 'The body did not arrive in time (request_timeout)',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        }
      }
      const secured = Array.isArray(op.security) && op.security.length > 0
      // Say so where no token is needed (health, signed image links, the GraphiQL page), rather
      // than leave generators and linters to guess; GET /graphql with a query does need one.
      if (!secured) op.security = path === '/graphql' ? [{}, { bearerAuth: [] }] : []
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const headers: JsonObject = {
          ...(response.headers ?? {}),
          'X-Request-Id': headerRef('X-Request-Id'),
        }
        // Limits apply per authenticated caller; a request refused at authentication has no bucket.
        if (secured && status !== '401') {
          for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
            headers[name] = headerRef(name)
        }
        if (status === '429') headers['Retry-After'] = headerRef('Retry-After')
        if (secured && (status === '401' || status === '403'))
          headers['WWW-Authenticate'] = headerRef('WWW-Authenticate')
        // Idempotency-Key is honoured on writes under /api/saved/, except token creation (its secret is never stored).
        if (
          path.startsWith('/api/saved/') &&
          WRITE_METHODS.has(method) &&
          op.operationId !== 'createAgentToken' &&
          /^2/.test(status)
        ) {
          headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed')
        }
        response.headers = headers
      }
    }
  }

  const named = Object.fromEntries(
    Object.entries(namedSchemas()).map(([name, schema]) => [
      name,
      preciseSchema(clone(schema as Json)),
    ]),
  )
  const byIdentity = new Map(
    Object.entries(named).map(([name, schema]) => [canonical(schema), name]),
  )
  spec.paths = refNamed(spec.paths as Json, byIdentity) as Spec['paths']
  const schemas: JsonObject = { ...spec.components?.schemas }
  for (const [name, schema] of Object.entries(named))
    schemas[name] = refNamed(schema, byIdentity, name)
  schemas.GraphQLResult = graphqlResult
  spec.components = {
    ...spec.components,
    schemas,
    headers: HEADERS,
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A session JWT (`npm run token -- <user-id>` in development) or a `sat_…` agent token.',
      },
    },
  }
  return spec
}

/**
 * The generator's document, made in-process from the app's routes (no public second
 * document): what `completeSpec` starts from.
 */
export function generatedDocument(app: AnyElysia): unknown {
  const { paths, components } = toOpenAPISchema(app)
  return {
    openapi: '3.1.2',
    info: API_INFO,
    tags: TAGS,
    paths,
    components: { schemas: components?.schemas ?? {} },
  }
}
