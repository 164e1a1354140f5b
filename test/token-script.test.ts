import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { JWT_SECRET, setup } from './helpers'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** Runs `npm run token -- …`'s script as a real process. */
async function token(...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'saved-token-'))
  dirs.push(dir)
  const proc = Bun.spawn([process.execPath, 'scripts/token.ts', ...args], {
    env: { ...process.env, JWT_SECRET, DATA_DIR: dir, NODE_ENV: '' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { stdout, stderr, code }
}

describe('npm run token', () => {
  test('prints a session JWT that the API accepts, valid for --days', async () => {
    const { stdout, stderr, code } = await token('alice', '--days', '2')
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const jwt = stdout.trim()
    const claims = decodeJwt(jwt)
    expect(claims.sub).toBe('alice')
    expect(claims.exp! - claims.iat!).toBe(2 * 86_400)
    const ctx = await setup()
    expect((await ctx.request('GET', '/api/saved/items', { token: jwt })).status).toBe(200)
  })

  test('bad invocations print one usage line and exit 2: no stack trace, never a token', async () => {
    const cases: [string[], string][] = [
      [['alice', '--days', 'abc'], '--days must be a whole number from 1 to 365, got "abc"'],
      [['alice', '--days', '0'], '--days must be a whole number from 1 to 365, got "0"'],
      [['alice', '--days', '1.5'], '--days must be a whole number'],
      [['alice', '--days', '366'], '--days must be a whole number'],
      [['alice', '--days'], "'--days <value>' argument missing"],
      [['alice', '--dayz', '3'], "unknown option '--dayz'"],
      [[], 'missing <user-id>'],
      [['--days', '3'], 'missing <user-id>'],
      [['alice', 'bob'], 'unexpected argument "bob"'],
    ]
    const results = await Promise.all(cases.map(([args]) => token(...args)))
    cases.forEach(([args, problem], i) => {
      const { stdout, stderr, code } = results[i]!
      expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: '' })
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(problem)
      expect(stderr).toContain('usage: npm run token -- <user-id> [--days N]')
      expect(stderr).not.toMatch(/\bat .+:\d+:\d+/)
    })
  })
})
