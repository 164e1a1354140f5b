import { SignJWT } from 'jose'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'bun:test'
import { loadConfig, prepareDataDir, type Config } from '../src/config'
import { openDatabase, type Db } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { createApp, type App } from '../src/app'
import { createLogger } from '../src/logger'
import { newId } from '../src/domain/ids'

export const JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long!'
const secretKey = new TextEncoder().encode(JWT_SECRET)

/** Real time plus an offset the test moves forward: leases and links expire without sleeping. */
export class TestClock {
  private offset = 0
  now = () => Date.now() + this.offset
  advance(ms: number) {
    this.offset += ms
  }
}

export interface TestContext {
  app: App
  clock: TestClock
  db: Db
  config: Config
  dir: string
  /** Sends a request through the app in-process; `token` becomes the bearer header. */
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>
  json<T = any>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: T; res: Response }>
}

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length) cleanups.pop()!()
})

/** A fresh app over a fresh, migrated libSQL file database in its own temp directory. */
export async function setup(env: Record<string, string> = {}): Promise<TestContext> {
  const dir = mkdtempSync(join(tmpdir(), 'saved-test-'))
  const fullEnv = {
    JWT_SECRET,
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/test.db`,
    LOG_LEVEL: 'silent',
    ...env,
  }
  prepareDataDir(fullEnv)
  const config = loadConfig(fullEnv)
  const db = await openDatabase(config.database)
  await migrateDatabase(db)
  const clock = new TestClock()
  const app = createApp({
    config,
    db,
    clock,
    logger: createLogger(process.env.TEST_LOG === '1' ? 'debug' : 'silent'),
  })
  cleanups.push(() => {
    app.deps.changes.close()
    db.$client.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const request: TestContext['request'] = (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    let body: BodyInit | undefined
    if (options.body instanceof FormData) body = options.body
    else if (typeof options.body === 'string') body = options.body
    else if (options.body !== undefined || 'body' in options) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    return app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
  }
  return {
    app,
    clock,
    db,
    config,
    dir,
    request,
    async json(method, path, options) {
      const res = await request(method, path, options)
      const text = await res.text()
      let body: any = text
      try {
        body = JSON.parse(text)
      } catch {}
      return { status: res.status, body, res }
    },
  }
}

/** A session JWT for `userId`, signed like the real identity provider would. */
export async function sessionToken(
  userId: string,
  options: { expiresIn?: string | number; secret?: Uint8Array; alg?: string } = {},
) {
  return new SignJWT({})
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '1h')
    .sign(options.secret ?? secretKey)
}

/** Creates an agent token through the real route and returns its raw secret and id. */
export async function agentToken(
  ctx: TestContext,
  session: string,
  scopes = ['read_items', 'update_workflow_status'],
  name = 'agent',
) {
  const { status, body } = await ctx.json('POST', '/api/saved/agent-tokens', {
    token: session,
    body: { name, scopes },
  })
  if (status !== 200) throw new Error(`token creation failed: ${status} ${JSON.stringify(body)}`)
  return { token: body.token as string, id: body.id as string }
}

/** Creates an item through the real route. */
export async function createItem(
  ctx: TestContext,
  session: string,
  fields: Record<string, unknown> = {},
) {
  const { status, body } = await ctx.json('POST', '/api/saved/items', {
    token: session,
    body: { type: 'event', title: 'An item', ...fields },
  })
  if (status !== 201) throw new Error(`item creation failed: ${status} ${JSON.stringify(body)}`)
  return body
}

export const expectEnvelope = (body: any, code: string) => {
  if (!body?.error || body.error.code !== code || typeof body.error.message !== 'string') {
    throw new Error(`expected error envelope with code ${code}, got ${JSON.stringify(body)}`)
  }
}

/** Follows `next_cursor` from `path` (which already has a query string) to the end; returns every id seen. */
export async function walkPages(
  ctx: TestContext,
  token: string,
  path: string,
  between?: (page: number) => Promise<void>,
) {
  const seen: string[] = []
  let cursor: string | null = null
  let page = 0
  do {
    const res: any = await ctx.json('GET', `${path}${cursor ? `&cursor=${cursor}` : ''}`, { token })
    if (res.status !== 200)
      throw new Error(`page ${page}: ${res.status} ${JSON.stringify(res.body)}`)
    seen.push(...res.body.items.map((i: any) => i.id))
    cursor = res.body.next_cursor
    await between?.(page++)
  } while (cursor)
  return seen
}

/** Writes `count` inbox items (requested action `workflow`, pending) for `userId` in one batch. */
export async function seedInbox(
  db: Db,
  userId: string,
  count: number,
  fields: { tags?: string[]; type?: string } = {},
) {
  const now = Date.now()
  const ids: string[] = []
  const statements = []
  for (let i = 0; i < count; i++) {
    const id = newId('itm', now - count + i)
    ids.push(id)
    statements.push({
      sql: `INSERT INTO items (id, user_id, type, status, workflow_status, tags, requested_action, created_at, updated_at)
            VALUES (?, ?, ?, 'extracted', 'pending', ?, 'workflow', ?, ?)`,
      args: [
        id,
        userId,
        fields.type ?? 'event',
        JSON.stringify(fields.tags ?? []),
        now - count + i,
        now - count + i,
      ],
    })
    for (const tag of fields.tags ?? []) {
      statements.push({
        sql: 'INSERT INTO item_tags (item_id, user_id, tag, created_at) VALUES (?, ?, ?, ?)',
        args: [id, userId, tag, now - count + i],
      })
    }
  }
  await db.$client.batch(statements, 'write')
  return ids
}
