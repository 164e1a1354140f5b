import { Elysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import { ErrorSchema, CreateItemBody } from './schemas'

const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

export const API_INFO = {
  title: 'Saved-Items Workflow API',
  version: '0.1.0',
  description:
    'Saved items wait for action; personal agents claim and finish them. Authenticate with `Authorization: Bearer <token>`: ' +
    'a session JWT, or a personal agent token (`sat_…`) with scopes `read_items` and/or `update_workflow_status`.',
}

/** The OpenAPI document, generated from the route schemas by @elysiajs/openapi. */
export const openapiDocument = () =>
  openapi({
    // The plugin's raw document; `/openapi/json` serves it completed by `completeSpec`.
    path: '/openapi',
    specPath: '/openapi/generated.json',
    provider: null,
    documentation: {
      info: API_INFO,
      tags: [
        { name: 'items', description: 'Saved items' },
        { name: 'workflow', description: 'Claims, statuses, history and the inbox' },
        { name: 'agent tokens', description: 'Personal agent tokens (signed-in session only)' },
        { name: 'system', description: 'Liveness and readiness' },
        { name: 'graphql', description: 'The same service through GraphQL' },
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Session JWT or sat_ agent token.' } },
        schemas: { Error: ErrorSchema as never, CreateItem: CreateItemBody as never },
      },
    },
  })

type Operation = {
  summary?: string
  tags?: string[]
  security?: unknown[]
  requestBody?: unknown
  parameters?: { name: string; in: string }[]
  responses?: Record<string, { description?: string; content?: Record<string, unknown> }>
}
type Spec = { paths?: Record<string, Record<string, Operation>> }

/**
 * What the generator cannot know from the route schemas: the Markdown alternative of answers
 * that take `format=md`, and the GraphQL endpoint.
 */
export function completeSpec(spec: Spec): Spec {
  for (const ops of Object.values(spec.paths ?? {})) {
    for (const op of Object.values(ops)) {
      const ok = op.responses?.['200']
      if (ok?.content && op.parameters?.some((p) => p.name === 'format' && p.in === 'query')) {
        ok.content['text/markdown'] = { schema: { type: 'string', description: 'With format=md: a readable Markdown document.' } }
      }
      // Every body is read under a deadline (BODY_TIMEOUT_SECONDS); src/app.ts's body parser.
      if (op.requestBody && op.responses && !op.responses['408']) {
        op.responses['408'] = { description: 'The body did not arrive in time (request_timeout)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
      }
    }
  }
  const graphqlError = { description: 'GraphQL errors carry extensions.code (UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CLAIM_CONFLICT, INVALID_TRANSITION, BAD_USER_INPUT, RATE_LIMITED) and extensions.reason (the REST error code).' }
  const graphqlResult = {
    description: 'A GraphQL result: { data, errors }. The schema is in schema/schema.graphql.',
    content: { 'application/json': { schema: { type: 'object', properties: { data: {}, errors: { type: 'array', items: { type: 'object' } } } } } },
  }
  spec.paths = {
    ...spec.paths,
    '/graphql': {
      post: {
        summary: 'GraphQL: queries items, item, inbox, agentTokens; mutations createItem, updateItem, createAgentToken, revokeAgentToken',
        tags: ['graphql'],
        security: [{ bearerAuth: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', required: ['query'], properties: { query: { type: 'string' }, variables: { type: 'object' }, operationName: { type: 'string' } } } } },
        },
        responses: { 200: graphqlResult, 400: graphqlError, 401: graphqlError, 408: graphqlError, 413: graphqlError, 415: graphqlError, 429: graphqlError, 500: graphqlError },
      },
      get: {
        summary: 'GraphiQL in a browser (Accept: text/html), or a query in the query string',
        tags: ['graphql'],
        responses: { 200: { description: 'GraphiQL page or a GraphQL result.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
  }
  return spec
}

/**
 * The interactive page. The operation list is rendered on the server, so the page is useful
 * offline; when the Scalar bundle can be fetched it takes over the page.
 */
export function docsPage(spec: Spec): string {
  const rows: string[] = []
  for (const [path, ops] of Object.entries(spec.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      rows.push(
        `<tr><td><code>${esc(method.toUpperCase())}</code></td><td><code>${esc(path)}</code></td><td>${esc(op.summary)}</td>` +
          `<td>${esc(Object.keys(op.responses ?? {}).join(', '))}</td></tr>`,
      )
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(API_INFO.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
code{font-size:.9em}</style></head><body>
<main id="static-docs"><h1>${esc(API_INFO.title)} <small>${esc(API_INFO.version)}</small></h1>
<p>${esc(API_INFO.description)}</p>
<p>The machine-readable document is at <a href="/openapi/json"><code>/openapi/json</code></a>; GraphQL is at <a href="/graphql"><code>/graphql</code></a>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What it does</th><th>Statuses</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></main>
<div id="app"></div>
<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference/dist/browser/standalone.min.js"
  onload="document.getElementById('static-docs').remove();Scalar.createApiReference('#app',{url:'/openapi/json'})"></script>
</body></html>`
}
