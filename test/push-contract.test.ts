import { describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { agentToken, createItem, sessionToken, setup } from './helpers'

describe('GraphQL webhooks', () => {
  test('create, list, deliveries and delete; agent tokens are refused', async () => {
    const ctx = await setup({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    const alice = await sessionToken('alice')
    const gql = async (token: string, query: string, variables?: unknown) =>
      (await ctx.json('POST', '/graphql', { token, body: { query, variables } })).body
    const created = await gql(
      alice,
      'mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id url actions enabled description } } }',
      {
        input: { url: 'http://127.0.0.1:9/hook', actions: ['DONE', 'CLAIM'], description: 'gql' },
      },
    )
    expect(created.errors).toBeUndefined()
    const { secret, webhook } = created.data.createWebhook
    expect(secret).toStartWith('whsec_')
    expect(webhook).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      actions: ['DONE', 'CLAIM'],
      enabled: true,
      description: 'gql',
    })
    const listed = await gql(alice, '{ webhooks { id actions } }')
    expect(listed.data.webhooks).toEqual([{ id: webhook.id, actions: ['DONE', 'CLAIM'] }])
    const deliveries = await gql(
      alice,
      'query ($id: ID!) { webhookDeliveries(id: $id) { id attempt status } }',
      { id: webhook.id },
    )
    expect(deliveries.data.webhookDeliveries).toEqual([])
    const bad = await gql(
      alice,
      'mutation { createWebhook(input: { url: "gopher://x" }) { secret } }',
    )
    expect(bad.errors[0].extensions.code).toBe('BAD_USER_INPUT')

    const agent = await agentToken(ctx, alice)
    const refused = await gql(agent.token, '{ webhooks { id } }')
    expect(refused.errors[0].extensions.code).toBe('UNAUTHENTICATED')
    expect(refused.errors[0].extensions.reason).toBe('session_required')

    expect(
      (await gql(alice, 'mutation ($id: ID!) { deleteWebhook(id: $id) }', { id: webhook.id })).data
        .deleteWebhook,
    ).toBe(true)
    const again = await gql(alice, 'mutation ($id: ID!) { deleteWebhook(id: $id) }', {
      id: webhook.id,
    })
    expect(again.errors[0].extensions.code).toBe('NOT_FOUND')
  })
})

describe('the OpenAPI document matches the push routes', () => {
  test('changes, events and webhooks: success and error answers validate against the published schemas', async () => {
    const ctx = await setup({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    const spec: any = await (await ctx.request('GET', '/openapi/json')).json()
    const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false })
    addFormats(ajv)
    ajv.addSchema({ $id: 'spec', components: spec.components }, 'spec')
    const alice = await sessionToken('alice')
    const agent = await agentToken(ctx, alice)
    const item = await createItem(ctx, alice, { requested_action: 'workflow' })
    await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: alice,
      body: { claim_action: 'claim' },
    })
    const hook = await ctx.json('POST', '/api/saved/webhooks', {
      token: alice,
      body: { url: 'http://127.0.0.1:9/x' },
    })
    const calls: [string, string, string, { token?: string; body?: unknown }][] = [
      ['GET', '/api/saved/changes?limit=5', '/api/saved/changes', { token: agent.token }],
      ['GET', '/api/saved/changes?after=x', '/api/saved/changes', { token: alice }],
      ['GET', '/api/saved/changes', '/api/saved/changes', {}],
      ['GET', '/api/saved/events?after=x', '/api/saved/events', { token: alice }],
      [
        'POST',
        '/api/saved/webhooks',
        '/api/saved/webhooks',
        { token: alice, body: { url: 'http://127.0.0.1:9/y', actions: ['created'] } },
      ],
      ['POST', '/api/saved/webhooks', '/api/saved/webhooks', { token: alice, body: { url: 'x' } }],
      [
        'POST',
        '/api/saved/webhooks',
        '/api/saved/webhooks',
        { token: agent.token, body: { url: 'http://127.0.0.1:9/y' } },
      ],
      ['GET', '/api/saved/webhooks', '/api/saved/webhooks', { token: alice }],
      [
        'GET',
        `/api/saved/webhooks/${hook.body.id}/deliveries`,
        '/api/saved/webhooks/{id}/deliveries',
        { token: alice },
      ],
      [
        'GET',
        '/api/saved/webhooks/whk_none/deliveries',
        '/api/saved/webhooks/{id}/deliveries',
        { token: alice },
      ],
      [
        'DELETE',
        `/api/saved/webhooks/${hook.body.id}`,
        '/api/saved/webhooks/{id}',
        { token: alice },
      ],
      [
        'DELETE',
        `/api/saved/webhooks/${hook.body.id}`,
        '/api/saved/webhooks/{id}',
        { token: alice },
      ],
    ]
    for (const [method, url, path, options] of calls) {
      const res = await ctx.request(method, url, options)
      const text = await res.text()
      const response = spec.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.status)]
      expect({ method, path, status: res.status, documented: Boolean(response) }).toEqual({
        method,
        path,
        status: res.status,
        documented: true,
      })
      const schema = response.content?.['application/json']?.schema
      if (!schema) continue
      const validate = ajv.compile(
        JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"spec#/components/')),
      )
      if (!validate(JSON.parse(text)))
        throw new Error(
          `${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 400)}`,
        )
    }
    const changes = await ctx.json('GET', '/api/saved/changes', { token: alice })
    expect(changes.body.changes.map((c: any) => c.action)).toEqual(['created', 'claim'])
    expect(
      spec.paths['/api/saved/events'].get.responses['200'].content['text/event-stream'],
    ).toBeDefined()
  })
})

describe('push configuration', () => {
  const base = { JWT_SECRET: 'x'.repeat(32), DATABASE_URL: ':memory:' }
  test('defaults, and bad values name their variable', async () => {
    const { loadConfig, ConfigError } = await import('../src/config')
    expect(loadConfig(base).push).toEqual({
      keepAliveMs: 15_000,
      webhooks: {
        retrySchedule: [5, 300, 1800, 7200, 18000, 36000],
        allowPrivateNetworks: false,
        timeoutMs: 10_000,
        pollMs: 500,
      },
    })
    expect(
      loadConfig({
        ...base,
        WEBHOOK_RETRY_SCHEDULE: '0.5, 2,60',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      }).push.webhooks,
    ).toMatchObject({
      retrySchedule: [0.5, 2, 60],
      allowPrivateNetworks: true,
    })
    for (const [name, value] of [
      ['WEBHOOK_RETRY_SCHEDULE', '5,,10'],
      ['WEBHOOK_RETRY_SCHEDULE', '-1'],
      ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe'],
      ['SSE_KEEPALIVE_MS', '60000'],
      ['WEBHOOK_TIMEOUT_MS', '0'],
      ['WEBHOOK_POLL_MS', 'fast'],
    ]) {
      let error: unknown
      try {
        loadConfig({ ...base, [name!]: value })
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as InstanceType<typeof ConfigError>).variable).toBe(name!)
    }
  })
})
