import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, prepareDataDir, ConfigError } from '../src/config'

const tmp = () => mkdtempSync(join(tmpdir(), 'saved-config-'))

describe('configuration', () => {
  test('defaults: port 3000, 0.0.0.0, a file database under ./data, a persisted dev secret', () => {
    const dir = tmp()
    prepareDataDir({ DATA_DIR: dir })
    const config = loadConfig({ DATA_DIR: dir })
    expect(config.port).toBe(3000)
    expect(config.host).toBe('0.0.0.0')
    expect(config.database.url).toBe(`file:${dir}/saved.db`)
    expect(config.rateLimitPerMinute).toBe(600)
    expect(config.jwtSource).toBe('dev-file')
    const again = loadConfig({ DATA_DIR: dir })
    expect(again.jwt.kind === 'secret' && new TextDecoder().decode(again.jwt.secret)).toBe(
      readFileSync(join(dir, 'dev-jwt-secret'), 'utf8').trim(),
    )
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).database.url).toBe('file:./data/saved.db')
  })

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'http' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'postgres://x' }, 'DATABASE_URL'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ JWT_JWKS_URL: 'not a url' }, 'JWT_JWKS_URL'],
    [{ JWT_SECRET: 'x'.repeat(32), JWT_JWKS_URL: 'https://idp.example/jwks' }, 'JWT_SECRET'],
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURES_PER_MINUTE: 'many' }, 'AUTH_FAILURES_PER_MINUTE'],
    [{ JWT_MAX_AGE_SECONDS: '10' }, 'JWT_MAX_AGE_SECONDS'],
    [{ BODY_TIMEOUT_SECONDS: '0' }, 'BODY_TIMEOUT_SECONDS'],
    [{ GRAPHQL_INTROSPECTION: 'maybe' }, 'GRAPHQL_INTROSPECTION'],
    [{ GRAPHIQL: 'sometimes' }, 'GRAPHIQL'],
    [{ WORKERS: '2', RATE_LIMIT_STORE: 'memory' }, 'RATE_LIMIT_STORE'],
    [{ NODE_ENV: 'production', JWT_JWKS_URL: 'http://idp.example/jwks' }, 'JWT_JWKS_URL'],
    [{ NODE_ENV: 'Production' }, 'JWT_SECRET'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ DATABASE_URL: ':memory:', DATABASE_SYNC_URL: 'libsql://x.turso.io' }, 'DATABASE_SYNC_URL'],
    [{ CORS_ORIGINS: 'app.example.com' }, 'CORS_ORIGINS'],
  ]
  for (const [env, variable] of bad) {
    test(`bad configuration names the variable: ${JSON.stringify(env)}`, () => {
      let error: unknown
      try {
        // As main.ts does it: prepare the data directory, then parse.
        const full = { DATA_DIR: tmp(), ...env }
        prepareDataDir(full)
        loadConfig(full)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe(variable)
      expect((error as Error).message).toStartWith(`${variable}: `)
      expect((error as Error).message).not.toContain('\n')
    })
  }

  test('production with a JWKS URL, issuer and audience starts', () => {
    const env = {
      NODE_ENV: 'production',
      DATA_DIR: tmp(),
      JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      JWT_ISSUER: 'https://idp.example/',
      JWT_AUDIENCE: 'saved',
    }
    prepareDataDir(env)
    const config = loadConfig(env)
    expect(config.jwt).toMatchObject({
      kind: 'jwks',
      issuer: 'https://idp.example/',
      audience: 'saved',
    })
  })

  test('the process refuses to start on bad configuration with a one-line message', async () => {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      env: { ...process.env, PORT: 'nope', DATA_DIR: tmp() },
      stderr: 'pipe',
      stdout: 'pipe',
    })
    const code = await proc.exited
    const stderr = await new Response(proc.stderr).text()
    expect(code).toBe(1)
    expect(stderr.trim().split('\n')).toEqual([
      'Configuration error: PORT: must be a whole number, got "nope"',
    ])
  })
})
