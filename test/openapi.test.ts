import { describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { setup, sessionToken, agentToken, createItem, type TestContext } from './helpers'

/**
 * Clients are generated from the OpenAPI document, so it must be truthful: every real answer
 * below is validated against the schema the document publishes for its route and status.
 */
async function validator(ctx: TestContext) {
  const spec: any = await (await ctx.request('GET', '/openapi/json')).json()
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema({ $id: 'spec', components: spec.components }, 'spec')
  const rewrite = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"spec#/components/'))
  return {
    spec,
    check(method: string, path: string, status: number, body: unknown) {
      const operation = spec.paths[path]?.[method.toLowerCase()]
      expect({ route: `${method} ${path}`, documented: Boolean(operation) }).toEqual({
        route: `${method} ${path}`,
        documented: true,
      })
      const response = operation.responses[String(status)]
      expect({ route: `${method} ${path}`, status, documented: Boolean(response) }).toEqual({
        route: `${method} ${path}`,
        status,
        documented: true,
      })
      const schema = response.content?.['application/json']?.schema
      if (!schema) return
      const validate = ajv.compile(rewrite(schema) as object)
      const ok = validate(body)
      if (!ok)
        throw new Error(
          `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
        )
    },
  }
}

describe('the OpenAPI document matches the real answers', () => {
  test('every route, success and error answers', async () => {
    const ctx = await setup()
    const v = await validator(ctx)
    const session = await sessionToken('alice')
    const reader = await agentToken(ctx, session, ['read_items'])
    const writer = await agentToken(ctx, session)
    const item = await createItem(ctx, session, {
      requested_action: 'calendar',
      tags: ['a'],
      destination_kind: 'calendar',
    })
    await createItem(ctx, session, { type: 'media' })
    const calls: [string, string, string, { token?: string; body?: unknown }][] = [
      ['GET', '/health', '/health', {}],
      ['GET', '/ready', '/ready', {}],
      ['GET', '/api/saved/items?limit=1', '/api/saved/items', { token: reader.token }],
      ['GET', '/api/saved/items?limit=0', '/api/saved/items', { token: reader.token }],
      ['GET', '/api/saved/items', '/api/saved/items', {}],
      [
        'GET',
        '/api/saved/items',
        '/api/saved/items',
        { token: writer.token.replace('sat_', 'sat_x') },
      ],
      [
        'POST',
        '/api/saved/items',
        '/api/saved/items',
        { token: session, body: { type: 'reference', title: 't' } },
      ],
      ['POST', '/api/saved/items', '/api/saved/items', { token: session, body: { type: 'nope' } }],
      ['GET', `/api/saved/items/${item.id}`, '/api/saved/items/{id}', { token: reader.token }],
      ['GET', '/api/saved/items/itm_missing', '/api/saved/items/{id}', { token: reader.token }],
      [
        'PATCH',
        `/api/saved/items/${item.id}`,
        '/api/saved/items/{id}',
        { token: writer.token, body: { claim_action: 'claim' } },
      ],
      [
        'PATCH',
        `/api/saved/items/${item.id}`,
        '/api/saved/items/{id}',
        { token: session, body: { claim_action: 'claim' } },
      ],
      [
        'PATCH',
        `/api/saved/items/${item.id}`,
        '/api/saved/items/{id}',
        { token: reader.token, body: { claim_action: 'claim' } },
      ],
      [
        'PATCH',
        `/api/saved/items/${item.id}`,
        '/api/saved/items/{id}',
        { token: writer.token, body: { corrections: { title: 'x' } } },
      ],
      [
        'GET',
        `/api/saved/items/${item.id}/history`,
        '/api/saved/items/{id}/history',
        { token: reader.token },
      ],
      ['GET', '/api/saved/inbox?claim_status=claimed', '/api/saved/inbox', { token: session }],
      ['GET', '/api/saved/agent-tokens', '/api/saved/agent-tokens', { token: session }],
      ['GET', '/api/saved/agent-tokens', '/api/saved/agent-tokens', { token: reader.token }],
      [
        'POST',
        '/api/saved/agent-tokens',
        '/api/saved/agent-tokens',
        { token: session, body: { name: 'n', scopes: ['read_items'] } },
      ],
      [
        'POST',
        '/api/saved/agent-tokens',
        '/api/saved/agent-tokens',
        { token: session, body: { name: '', scopes: [] } },
      ],
      [
        'DELETE',
        `/api/saved/agent-tokens/${reader.id}`,
        '/api/saved/agent-tokens/{id}',
        { token: session },
      ],
      [
        'DELETE',
        `/api/saved/agent-tokens/${reader.id}`,
        '/api/saved/agent-tokens/{id}',
        { token: session },
      ],
    ]
    const statuses = new Set<string>()
    for (const [method, url, path, options] of calls) {
      const res = await ctx.request(method, url, options)
      const text = await res.text()
      v.check(method, path, res.status, text ? JSON.parse(text) : undefined)
      statuses.add(`${method} ${path} ${res.status}`)
    }
    // The walk really reached successes and errors alike.
    expect(statuses.size).toBeGreaterThan(18)
    // Markdown is documented on the `format` parameter, not as a second 200 content type
    // that would make generated clients type every answer as `Page | string`.
    for (const path of ['/api/saved/items', '/api/saved/items/{id}', '/api/saved/inbox']) {
      const op = v.spec.paths[path].get
      expect(Object.keys(op.responses['200'].content)).toEqual(['application/json'])
      expect(op.parameters.find((p: any) => p.name === 'format').description).toContain(
        'text/markdown',
      )
    }
  })
})
