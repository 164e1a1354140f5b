import { describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setup, sessionToken, JWT_SECRET } from './helpers'
import { loadConfig } from '../src/config'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { createApp } from '../src/app'
import { createLogger } from '../src/logger'

describe('request ids, logs, headers, CORS', () => {
  test('x-request-id is echoed (or made) on successes and errors alike, with security headers', async () => {
    const ctx = await setup()
    const given = await ctx.request('GET', '/health', { headers: { 'x-request-id': 'abc-123' } })
    expect(given.headers.get('x-request-id')).toBe('abc-123')
    const made = await ctx.request('GET', '/api/saved/items')
    expect(made.status).toBe(401)
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(made.headers.get('x-content-type-options')).toBe('nosniff')
    expect(made.headers.get('cache-control')).toBe('no-store')
    const hostile = await ctx.request('GET', '/health', {
      headers: { 'x-request-id': 'a b\u0001<script>' },
    })
    expect(hostile.headers.get('x-request-id')).not.toContain('<')
  })

  test('log lines are structured and never contain a token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-log-'))
    const lines: string[] = []
    const config = loadConfig({ JWT_SECRET, DATA_DIR: dir, DATABASE_URL: `file:${dir}/t.db` })
    const db = await openDatabase(config.database)
    await migrateDatabase(db)
    const app = createApp({ config, db, logger: createLogger('debug', (l) => lines.push(l)) })
    const session = await sessionToken('alice')
    const res = await app.handle(
      new Request('http://localhost/api/saved/agent-tokens', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${session}`,
          'content-type': 'application/json',
          'x-request-id': 'req-1',
        },
        body: JSON.stringify({ name: 'n', scopes: ['read_items'] }),
      }),
    )
    const raw = ((await res.json()) as any).token
    await app.handle(
      new Request('http://localhost/api/saved/items?cursor=x', {
        headers: { authorization: `Bearer ${raw}` },
      }),
    )
    const all = lines.join('\n')
    expect(lines.length).toBeGreaterThanOrEqual(2)
    const first = JSON.parse(lines[0]!)
    expect(first).toMatchObject({
      level: 'info',
      msg: 'request',
      request_id: 'req-1',
      method: 'POST',
      path: '/api/saved/agent-tokens',
      status: 200,
    })
    expect(all).not.toContain(raw)
    expect(all).not.toContain(session)
    db.$client.close()
  })

  test('CORS answers only the configured origins', async () => {
    const ctx = await setup({ CORS_ORIGINS: 'https://app.example.com' })
    const ok = await ctx.request('OPTIONS', '/api/saved/items', {
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    })
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    const other = await ctx.request('GET', '/health', {
      headers: { origin: 'https://evil.example.com' },
    })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    const none = await setup()
    const plain = await none.request('GET', '/health', {
      headers: { origin: 'https://app.example.com' },
    })
    expect(plain.headers.get('access-control-allow-origin')).toBeNull()
  })
})
