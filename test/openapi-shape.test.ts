import { describe, expect, test } from 'bun:test'
import { createConfig, lintFromString } from 'openapi-typescript-ts5'
import { operationIdFor } from '../src/http/docs'
import { setup, sessionToken } from './helpers'

/** Every object in the document, with its JSON path. */
function* walk(node: unknown, path = '#'): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(node)) for (const [i, n] of node.entries()) yield* walk(n, `${path}/${i}`)
  else if (node && typeof node === 'object') {
    yield [path, node as Record<string, unknown>]
    for (const [k, v] of Object.entries(node)) yield* walk(v, `${path}/${k}`)
  }
}

describe('the OpenAPI document is shaped for client generators', () => {
  test('named schemas, referenced instead of copied', async () => {
    const ctx = await setup()
    const spec: any = await (await ctx.request('GET', '/openapi/json')).json()
    const names = Object.keys(spec.components.schemas)
    for (const name of [
      'Item',
      'ItemWithImage',
      'ItemPage',
      'History',
      'HistoryEvent',
      'AgentToken',
      'AgentTokenList',
      'CreatedAgentToken',
      'Error',
      'Claimant',
      'CreateItem',
      'UpdateItem',
      'CreateAgentToken',
      'GraphQLResult',
    ]) {
      expect(names).toContain(name)
    }
    const ref = (method: string, path: string, status: string) =>
      spec.paths[path][method].responses[status].content['application/json'].schema.$ref
    expect(ref('get', '/api/saved/items', '200')).toBe('#/components/schemas/ItemPage')
    expect(ref('get', '/api/saved/inbox', '200')).toBe('#/components/schemas/ItemPage')
    expect(ref('get', '/api/saved/items/{id}', '200')).toBe('#/components/schemas/ItemWithImage')
    expect(ref('post', '/api/saved/items', '201')).toBe('#/components/schemas/ItemWithImage')
    expect(ref('patch', '/api/saved/items/{id}', '200')).toBe('#/components/schemas/Item')
    expect(ref('get', '/api/saved/items/{id}/history', '200')).toBe('#/components/schemas/History')
    expect(ref('get', '/api/saved/agent-tokens', '200')).toBe('#/components/schemas/AgentTokenList')
    expect(ref('post', '/api/saved/agent-tokens', '200')).toBe(
      '#/components/schemas/CreatedAgentToken',
    )
    expect(
      spec.paths['/api/saved/items/{id}'].patch.requestBody.content['application/json'].schema.$ref,
    ).toBe('#/components/schemas/UpdateItem')
    expect(spec.components.schemas.ItemPage.properties.items.items.$ref).toBe(
      '#/components/schemas/Item',
    )
    expect(spec.components.schemas.AgentTokenList.properties.tokens.items.$ref).toBe(
      '#/components/schemas/AgentToken',
    )
    // Every error answer is the one Error schema.
    for (const [path, ops] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (path !== '/graphql' && Number(status) >= 400) {
            expect({
              at: `${method} ${path} ${status}`,
              ref: response.content['application/json'].schema.$ref,
            }).toEqual({ at: `${method} ${path} ${status}`, ref: '#/components/schemas/Error' })
          }
        }
      }
    }
    // Every $ref resolves.
    for (const [at, node] of walk(spec)) {
      if (typeof node.$ref === 'string') {
        const target = node.$ref
          .slice(2)
          .split('/')
          .reduce((n: any, key: string) => n?.[key], spec)
        expect({ at, ref: node.$ref, resolves: target !== undefined }).toEqual({
          at,
          ref: node.$ref,
          resolves: true,
        })
      }
    }
  })

  test('precise scalars: integers are integers, string literals are enums', async () => {
    const ctx = await setup()
    const spec: any = await (await ctx.request('GET', '/openapi/json')).json()
    for (const [at, node] of walk(spec)) {
      // Elysia's "number or numeric string" coercion union must not reach generated clients.
      expect({
        at,
        numericString:
          node.type === 'string' && (node.format === 'integer' || node.format === 'numeric'),
      }).toEqual({ at, numericString: false })
      if (Array.isArray(node.anyOf))
        expect({ at, constUnion: node.anyOf.every((b: any) => 'const' in b) }).toEqual({
          at,
          constUnion: false,
        })
    }
    expect(spec.components.schemas.UpdateItem.properties.lease_seconds).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 86400,
    })
    const limit = spec.paths['/api/saved/inbox'].get.parameters.find((p: any) => p.name === 'limit')
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
    expect(spec.components.schemas.Item.properties.type).toEqual({
      type: 'string',
      enum: ['event', 'media', 'reference'],
    })
    const variables =
      spec.paths['/graphql'].post.requestBody.content['application/json'].schema.properties
        .variables
    expect(variables.anyOf[0]).toEqual({ type: 'object', additionalProperties: true })
  })

  test('operation ids, servers and headers', async () => {
    const ctx = await setup()
    const spec: any = await (await ctx.request('GET', '/openapi/json')).json()
    const ids = Object.entries<any>(spec.paths).flatMap(([path, ops]) =>
      Object.entries<any>(ops).map(([method, op]) => [
        `${method.toUpperCase()} ${path}`,
        op.operationId,
      ]),
    )
    expect(Object.fromEntries(ids)).toMatchObject({
      'GET /api/saved/items': 'listItems',
      'POST /api/saved/items': 'createItem',
      'GET /api/saved/items/{id}': 'getItem',
      'PATCH /api/saved/items/{id}': 'updateItem',
      'GET /api/saved/items/{id}/history': 'getItemHistory',
      'GET /api/saved/inbox': 'listInbox',
      'GET /api/saved/agent-tokens': 'listAgentTokens',
      'POST /api/saved/agent-tokens': 'createAgentToken',
      'DELETE /api/saved/agent-tokens/{id}': 'revokeAgentToken',
      'GET /health': 'health',
      'GET /ready': 'ready',
      'POST /graphql': 'graphql',
    })
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length)
    for (const [, id] of ids) expect(id).toMatch(/^[a-z][A-Za-z]*$/)
    // Routes still to come get their names from the table; any other from the rule.
    expect(operationIdFor('post', '/api/saved/inbox/claim')).toBe('claimNextItem')
    expect(operationIdFor('delete', '/api/saved/items/{id}')).toBe('deleteItem')
    expect(operationIdFor('get', '/api/saved/items/{id}/notes')).toBe('getItemNotes')
    expect(operationIdFor('post', '/api/saved/saved-searches')).toBe('createSavedSearches')

    expect(spec.servers).toEqual([
      { url: '/', description: 'The server that serves this document' },
    ])
    const deployed: any = await (
      await (
        await setup({ PUBLIC_URL: 'https://saved.example.com' })
      ).request('GET', '/openapi/json')
    ).json()
    expect(deployed.servers[0].url).toBe('https://saved.example.com')

    const headers = (method: string, path: string, status: string) =>
      Object.keys(spec.paths[path][method].responses[status].headers ?? {})
    expect(headers('get', '/api/saved/inbox', '200')).toEqual(
      expect.arrayContaining([
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'X-Request-Id',
      ]),
    )
    expect(headers('get', '/api/saved/inbox', '429')).toContain('Retry-After')
    expect(headers('get', '/api/saved/inbox', '401')).toContain('WWW-Authenticate')
    expect(headers('get', '/api/saved/inbox', '403')).toContain('WWW-Authenticate')
    expect(headers('patch', '/api/saved/items/{id}', '200')).toContain('Idempotent-Replayed')
    expect(headers('post', '/api/saved/items', '201')).toContain('Idempotent-Replayed')
    expect(headers('post', '/api/saved/agent-tokens', '200')).not.toContain('Idempotent-Replayed')
    expect(headers('get', '/health', '200')).not.toContain('RateLimit-Limit')
    expect(spec.components.headers['RateLimit-Remaining'].schema.type).toBe('integer')
  })

  test("Redocly's recommended rules find no error in it", async () => {
    const ctx = await setup()
    const source = await (await ctx.request('GET', '/openapi/json')).text()
    const problems = await lintFromString({
      source,
      absoluteRef: 'openapi.json',
      config: await createConfig({ extends: ['recommended'] }),
    })
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
    expect(errors).toEqual([])
    // Warnings accepted: no license (a private project); health, ready and the GraphiQL page have no 4xx.
    const warnings = problems.filter((p) => p.severity !== 'error').map((p) => p.ruleId)
    expect([...new Set(warnings)].sort()).toEqual(['info-license', 'operation-4xx-response'])
  })

  test('the declared rate and request-id headers are the ones real answers carry', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '2' })
    const session = await sessionToken('alice')
    const ok = await ctx.request('GET', '/api/saved/inbox', { token: session })
    for (const name of [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'X-Request-Id',
    ])
      expect({ name, value: ok.headers.get(name) !== null }).toEqual({ name, value: true })
    expect(Number.isInteger(Number(ok.headers.get('RateLimit-Remaining')))).toBe(true)
    await ctx.request('GET', '/api/saved/inbox', { token: session })
    const limited = await ctx.request('GET', '/api/saved/inbox', { token: session })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThan(0)
    const unauthorized = await ctx.request('GET', '/api/saved/inbox')
    expect(unauthorized.headers.get('WWW-Authenticate')).toContain('Bearer')
  })
})
