import { afterEach, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, prepareDataDir, ConfigError } from '../src/config'
import { openDatabase } from '../src/db/client'
import { setup, sessionToken } from './helpers'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'saved-perm-'))
  dirs.push(dir)
  return dir
}
const mode = (path: string) => statSync(path).mode & 0o777

/** Runs `fn` with umask 000, the worst case the red team tried; restores the umask afterwards. */
async function withOpenUmask<T>(fn: () => Promise<T> | T): Promise<T> {
  const previous = process.umask(0)
  try {
    return await fn()
  } finally {
    process.umask(previous)
  }
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('files on disk are owner-only (issue 15 row 10)', () => {
  test('under umask 000: data directory 0700, dev JWT secret and URL-signing secret 0600', async () => {
    const root = tmp()
    await withOpenUmask(() => {
      prepareDataDir({ DATA_DIR: join(root, 'dev') })
      prepareDataDir({
        DATA_DIR: join(root, 'jwks'),
        JWT_JWKS_URL: 'https://idp.example/jwks.json',
      })
    })
    expect(mode(join(root, 'dev'))).toBe(0o700)
    expect(mode(join(root, 'dev', 'dev-jwt-secret'))).toBe(0o600)
    expect(mode(join(root, 'jwks'))).toBe(0o700)
    expect(mode(join(root, 'jwks', 'url-signing-secret'))).toBe(0o600)
    expect(loadConfig({ DATA_DIR: join(root, 'dev') }).jwtSource).toBe('dev-file')

    // Every level it creates is 0700; a directory that already exists (maybe shared) is left alone.
    const shared = join(root, 'shared')
    mkdirSync(shared, { mode: 0o755 })
    chmodSync(shared, 0o755)
    await withOpenUmask(() => prepareDataDir({ DATA_DIR: join(shared, 'a', 'b') }))
    expect(mode(shared)).toBe(0o755)
    expect(mode(join(shared, 'a'))).toBe(0o700)
    expect(mode(join(shared, 'a', 'b'))).toBe(0o700)
    expect(mode(join(shared, 'a', 'b', 'dev-jwt-secret'))).toBe(0o600)
  })

  test('under umask 000: the database directory 0700, database file and its WAL 0600, images 0700 / 0600', async () => {
    const root = tmp()
    const path = join(root, 'nested', 'db', 'saved.db')
    const db = await withOpenUmask(() => openDatabase({ url: `file:${path}` }))
    await db.$client.execute('CREATE TABLE t (x)')
    await db.$client.execute('INSERT INTO t VALUES (1)')
    expect(mode(join(root, 'nested', 'db'))).toBe(0o700)
    expect(mode(path)).toBe(0o600)
    expect(mode(`${path}-wal`)).toBe(0o600)
    db.$client.close()

    // An existing world-readable database file (an older version's) is tightened on open.
    const old = join(root, 'old.db')
    writeFileSync(old, '')
    chmodSync(old, 0o644)
    ;(await openDatabase({ url: `file:${old}` })).$client.close()
    expect(mode(old)).toBe(0o600)

    const ctx = await setup()
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    )
    const form = new FormData()
    form.append('type', 'media')
    form.append('image', new File([png], 'a.png', { type: 'image/png' }))
    const session = await sessionToken('alice')
    const res = await withOpenUmask(() =>
      ctx.request('POST', '/api/saved/items', { token: session, body: form }),
    )
    expect(res.status).toBe(201)
    const images = join(ctx.dir, 'images')
    expect(mode(images)).toBe(0o700)
    const files = readdirSync(images)
    expect(files).toHaveLength(1)
    expect(mode(join(images, files[0]!))).toBe(0o600)
  })

  test('a dev secret shorter than 32 bytes, or readable by group or others, is refused with one line', async () => {
    const dir = tmp()
    const secretPath = join(dir, 'dev-jwt-secret')
    writeFileSync(secretPath, 'x\n', { mode: 0o600 })
    const short = configError({ DATA_DIR: dir })
    expect(short.variable).toBe('JWT_SECRET')
    expect(short.message).toContain('fewer than 32 bytes')
    expect(short.message).not.toContain('\n')

    writeFileSync(secretPath, 'y'.repeat(43) + '\n')
    chmodSync(secretPath, 0o644)
    const open = configError({ DATA_DIR: dir })
    expect(open.variable).toBe('JWT_SECRET')
    expect(open.message).toContain('readable by group or others')
    chmodSync(secretPath, 0o600)
    expect(loadConfig({ DATA_DIR: dir }).jwtSource).toBe('dev-file')

    // The attack was a JWT forged with a 1-byte secret; now the server does not start on one.
    writeFileSync(secretPath, 'x\n', { mode: 0o600 })
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      env: { ...process.env, PORT: '0', DATA_DIR: dir, JWT_SECRET: '', NODE_ENV: '' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await proc.exited).toBe(1)
    const stderr = await new Response(proc.stderr).text()
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toStartWith('Configuration error: JWT_SECRET: ')
  })

  test('NODE_ENV is compared case-insensitively: Production without JWT configuration does not start', () => {
    for (const value of ['Production', 'PRODUCTION', ' production ']) {
      const dir = tmp()
      prepareDataDir({ DATA_DIR: dir, NODE_ENV: value })
      expect(existsSync(join(dir, 'dev-jwt-secret'))).toBe(false)
      expect(configError({ DATA_DIR: dir, NODE_ENV: value }).variable).toBe('JWT_SECRET')
      expect(
        loadConfig({ DATA_DIR: dir, NODE_ENV: value, JWT_SECRET: 'z'.repeat(32) }).production,
      ).toBe(true)
    }
  })

  test('loadConfig writes nothing: parsing a fresh environment leaves the data directory untouched', () => {
    const dir = join(tmp(), 'never-created')
    loadConfig({ DATA_DIR: dir, JWT_SECRET: 'z'.repeat(32) })
    expect(existsSync(dir)).toBe(false)
    expect(configError({ DATA_DIR: dir }).variable).toBe('JWT_SECRET')
    expect(existsSync(dir)).toBe(false)
  })
})
