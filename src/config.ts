import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { makePrivateDir, PRIVATE_FILE_MODE } from './private-files'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** Session JWT verification: a shared HS256 secret, or the public keys of an identity provider. */
export type JwtConfig = ({ kind: 'secret'; secret: Uint8Array } | { kind: 'jwks'; url: URL }) & {
  issuer?: string
  audience?: string
  /** Longest accepted lifetime of a session JWT (`exp - iat`, and `exp - now`), seconds. */
  maxAgeSeconds: number
}

export interface S3Config {
  bucket: string
  endpoint?: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: string
}

export interface Config {
  port: number
  host: string
  /** Server processes sharing the port (reusePort) and the database; 1 = this process only. */
  workers: number
  production: boolean
  dataDir: string
  database: { url: string; authToken?: string; syncUrl?: string }
  jwt: JwtConfig
  /** Where the dev secret came from, so the start-up log can say how to mint a token. */
  jwtSource: 'env' | 'dev-file' | 'jwks'
  /** Signs image URLs; separate from the JWT key so a JWKS deployment still has one. */
  urlSigningKey: Uint8Array
  signedUrlTtlSeconds: number
  s3?: S3Config
  rateLimitPerMinute: number
  /** Failed authentications allowed per client address and minute; 0 = unlimited. */
  authFailuresPerMinute: number
  /** Where rate-limit buckets live: this process, or the database (shared by WORKERS). */
  rateLimitStore: 'memory' | 'database'
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** Public origin used in signed image links (e.g. https://api.example.com); default: the request's origin. */
  publicUrl?: string
  corsOrigins: string[]
  /** Fresh claims after which an item is stuck (MAX_CLAIM_ATTEMPTS). */
  maxClaimAttempts: number
  /** GraphQL introspection (`__schema`, `__type`) and the GraphiQL page; default on in development only. */
  graphqlIntrospection: boolean
  graphiql: boolean
  /** Live events (SSE_KEEPALIVE_MS) and webhooks (WEBHOOK_*), CONTRACT 8. */
  push: PushConfig
  limits: {
    jsonBodyBytes: number
    uploadBytes: number
    /** A whole request body must arrive within this (slowly trickled bodies are cut off). */
    bodyTimeoutMs: number
    /** Quotas per user (CONTRACT 10). */
    maxItemsPerUser: number
    maxImageBytesPerUser: number
    /** Claim-next requests waiting at once, per process and per caller. */
    maxWaiters: number
    maxWaitersPerCaller: number
  }
}

export interface PushConfig {
  /** A comment line on every open event stream at least this often. */
  keepAliveMs: number
  webhooks: {
    /** Seconds to wait before each retry; a delivery is given up after the last. */
    retrySchedule: number[]
    /** Deliver to loopback, private, link-local and multicast addresses (tests, private deployments). */
    allowPrivateNetworks: boolean
    /** One delivery attempt's time limit. */
    timeoutMs: number
    /** How often each process looks for changes to enqueue and deliveries that are due. */
    pollMs: number
  }
}

function retrySchedule(raw: string | undefined): number[] {
  const text = raw === undefined || raw.trim() === '' ? '5,300,1800,7200,18000,36000' : raw
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length > 20 || parts.some((p) => !/^\d{1,6}(\.\d{1,3})?$/.test(p))) {
    throw new ConfigError(
      'WEBHOOK_RETRY_SCHEDULE',
      `must be up to 20 comma-separated numbers of seconds, got "${raw}"`,
    )
  }
  return parts.map(Number)
}

/** A configuration error names the variable; main prints it as one line and exits. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
  }
}

type Env = Record<string, string | undefined>

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`)
  return n
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase()
  if (raw === '') return fallback
  if (['true', '1', 'yes', 'on'].includes(raw)) return true
  if (['false', '0', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`)
}

function url(env: Env, name: string, protocols: string[]): URL | undefined {
  const raw = env[name]
  if (!raw) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, `is not a valid URL: "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`)
  }
  return parsed
}

function databaseUrl(raw: string): string {
  if (raw === ':memory:') return raw
  if (/^file:.+/.test(raw)) return raw
  if (/^(libsql|https?|wss?):\/\/.+/.test(raw)) {
    try {
      new URL(raw)
      return raw
    } catch {
      /* fall through */
    }
  }
  throw new ConfigError(
    'DATABASE_URL',
    `must be :memory:, file:<path>, libsql://, https:// or wss:// — got "${raw}"`,
  )
}

const DEV_JWT_SECRET_FILE = 'dev-jwt-secret'
const URL_SIGNING_SECRET_FILE = 'url-signing-secret'

const isProduction = (env: Env) => (env.NODE_ENV ?? '').trim().toLowerCase() === 'production'
const dataDirOf = (env: Env) => env.DATA_DIR || './data'

/**
 * The only start-up step that writes files: the data directory (0700 when it creates it) and, where the environment
 * leaves them to us, the development JWT secret and the URL-signing secret (0600, 32 random
 * bytes). Called by main.ts, the token script and the test helper before `loadConfig`, which only
 * reads. Existing files are left as they are; `loadConfig` judges them.
 */
export function prepareDataDir(env: Env = process.env): void {
  const dataDir = dataDirOf(env)
  const needsDevJwt = !env.JWT_SECRET && !env.JWT_JWKS_URL && !isProduction(env)
  const needsSigningKey = !env.URL_SIGNING_SECRET && !!env.JWT_JWKS_URL && !env.JWT_SECRET
  // Local images live there too; with S3 and configured secrets the directory is not needed.
  const usesDataDir = !env.S3_BUCKET || needsDevJwt || needsSigningKey
  if (!usesDataDir) return
  try {
    makePrivateDir(dataDir)
    for (const [needed, file] of [
      [needsDevJwt, DEV_JWT_SECRET_FILE],
      [needsSigningKey, URL_SIGNING_SECRET_FILE],
    ] as const) {
      const path = join(dataDir, file)
      if (!needed || existsSync(path)) continue
      try {
        // 'wx': never overwrite a secret another process wrote a moment ago.
        writeFileSync(path, randomBytes(32).toString('base64url') + '\n', {
          mode: PRIVATE_FILE_MODE,
          flag: 'wx',
        })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
  } catch (error) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot prepare ${dataDir}: ${(error as Error).message.split('\n')[0]}`,
    )
  }
}

/**
 * A secret kept under the data directory. Refused when missing, shorter than 32 bytes (a 1-byte
 * file would make every JWT forgeable) or open to group or others (anyone on the host could read
 * it and mint sessions). The error names the variable that would replace the file.
 */
function persistedSecret(dataDir: string, file: string, variable: string): Uint8Array {
  const path = join(dataDir, file)
  if (!existsSync(path)) {
    throw new ConfigError(
      variable,
      `is not set and ${path} does not exist (npm start creates it; or set ${variable})`,
    )
  }
  const mode = statSync(path).mode
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new ConfigError(
      variable,
      `is not set and ${path} is readable by group or others (mode ${(mode & 0o777).toString(8)}; chmod 600 it)`,
    )
  }
  const secret = new TextEncoder().encode(readFileSync(path, 'utf8').trim())
  if (secret.byteLength < 32)
    throw new ConfigError(variable, `is not set and ${path} holds fewer than 32 bytes`)
  return secret
}

/**
 * `DATABASE_URL` as it may be logged: without `user:pass@` and without the value of any query
 * parameter that can carry a credential (`authToken`, `token`, `password`, `key`, `secret`…).
 */
export function redactDatabaseUrl(raw: string): string {
  return raw
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1')
    .replace(
      /([?&][^=&#]*(?:token|password|pass|pwd|secret|key|auth|credential)[^=&#]*=)[^&#]*/gi,
      '$1[redacted]',
    )
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const

/**
 * Parses the environment once. Nothing else in the program reads `process.env`. Pure apart from
 * reading the secret files `prepareDataDir` made: it never writes.
 */
export function loadConfig(env: Env = process.env): Config {
  // `Production` is production too: a typo must not silently mean development mode.
  const production = isProduction(env)
  const dataDir = dataDirOf(env)
  const port = int(env, 'PORT', 3000, 0, 65535)
  const host = env.HOST || '0.0.0.0'

  const dbUrl = databaseUrl(env.DATABASE_URL || `file:${dataDir}/saved.db`)
  const syncUrl = url(env, 'DATABASE_SYNC_URL', ['libsql:', 'https:', 'http:', 'wss:', 'ws:'])
  if (syncUrl && !dbUrl.startsWith('file:')) {
    throw new ConfigError('DATABASE_SYNC_URL', 'an embedded replica needs DATABASE_URL=file:<path>')
  }
  const remote = !dbUrl.startsWith('file:') && dbUrl !== ':memory:'
  if ((remote || syncUrl) && !env.DATABASE_AUTH_TOKEN && /turso\.io/.test(syncUrl?.host ?? dbUrl)) {
    throw new ConfigError('DATABASE_AUTH_TOKEN', 'is required for a Turso database')
  }

  const issuer = env.JWT_ISSUER || undefined
  const audience = env.JWT_AUDIENCE || undefined
  // 30 days: the token script's default lifetime; an IdP's sessions are usually far shorter.
  const maxAgeSeconds = int(env, 'JWT_MAX_AGE_SECONDS', 30 * 86400, 60, 366 * 86400)
  let jwt: JwtConfig
  let jwtSource: Config['jwtSource']
  const jwksUrl = url(env, 'JWT_JWKS_URL', ['https:', 'http:'])
  // Plain HTTP lets anyone on the path swap the keys and mint sessions.
  if (jwksUrl && production && jwksUrl.protocol !== 'https:') {
    throw new ConfigError('JWT_JWKS_URL', 'must use https in production')
  }
  if (env.JWT_SECRET && jwksUrl) {
    throw new ConfigError('JWT_SECRET', 'set either JWT_SECRET or JWT_JWKS_URL, not both')
  }
  if (env.JWT_SECRET) {
    const secret = new TextEncoder().encode(env.JWT_SECRET)
    if (secret.byteLength < 32)
      throw new ConfigError('JWT_SECRET', 'must be at least 32 bytes for HS256')
    jwt = { kind: 'secret', secret, issuer, audience, maxAgeSeconds }
    jwtSource = 'env'
  } else if (jwksUrl) {
    jwt = { kind: 'jwks', url: jwksUrl, issuer, audience, maxAgeSeconds }
    jwtSource = 'jwks'
  } else if (production) {
    throw new ConfigError('JWT_SECRET', 'is required in production (or set JWT_JWKS_URL)')
  } else {
    jwt = {
      kind: 'secret',
      secret: persistedSecret(dataDir, DEV_JWT_SECRET_FILE, 'JWT_SECRET'),
      issuer,
      audience,
      maxAgeSeconds,
    }
    jwtSource = 'dev-file'
  }

  let urlSigningKey: Uint8Array
  if (env.URL_SIGNING_SECRET) {
    urlSigningKey = new TextEncoder().encode(env.URL_SIGNING_SECRET)
    if (urlSigningKey.byteLength < 32)
      throw new ConfigError('URL_SIGNING_SECRET', 'must be at least 32 bytes')
  } else if (jwt.kind === 'secret') {
    // Derive from the JWT secret so a configured deployment needs one secret, not two.
    urlSigningKey = new Uint8Array(
      new Bun.CryptoHasher('sha256', jwt.secret).update('image-url-signing').digest(),
    )
  } else {
    urlSigningKey = persistedSecret(dataDir, URL_SIGNING_SECRET_FILE, 'URL_SIGNING_SECRET')
  }

  const s3: S3Config | undefined = env.S3_BUCKET
    ? {
        bucket: env.S3_BUCKET,
        endpoint: url(env, 'S3_ENDPOINT', ['https:', 'http:'])?.toString(),
        region: env.S3_REGION || undefined,
        accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
      }
    : undefined

  const workers = int(env, 'WORKERS', 1, 1, 64)
  // Several workers must share buckets, or each caller would get n times the limit.
  const rateLimitStore = (env.RATE_LIMIT_STORE ||
    (workers > 1 ? 'database' : 'memory')) as Config['rateLimitStore']
  if (rateLimitStore !== 'memory' && rateLimitStore !== 'database') {
    throw new ConfigError(
      'RATE_LIMIT_STORE',
      `must be memory or database, got "${env.RATE_LIMIT_STORE}"`,
    )
  }
  if (rateLimitStore === 'memory' && workers > 1) {
    throw new ConfigError(
      'RATE_LIMIT_STORE',
      `memory gives each of the ${workers} WORKERS its own buckets (${workers}× the limit); use database`,
    )
  }
  const rateLimitPerMinute = int(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000)
  const authFailuresPerMinute = int(env, 'AUTH_FAILURES_PER_MINUTE', 60, 0, 1_000_000)

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel']
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(
      'LOG_LEVEL',
      `must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`,
    )
  }

  const corsOrigins = (env.CORS_ORIGINS || '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/]+$/.test(origin)) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `"${origin}" is not an origin like https://app.example.com`,
      )
    }
  }

  return Object.freeze({
    port,
    host,
    workers,
    production,
    dataDir,
    database: {
      url: dbUrl,
      authToken: env.DATABASE_AUTH_TOKEN || undefined,
      syncUrl: syncUrl?.toString(),
    },
    jwt,
    jwtSource,
    urlSigningKey,
    signedUrlTtlSeconds: int(env, 'SIGNED_URL_TTL_SECONDS', 900, 1, 7 * 24 * 3600),
    s3,
    rateLimitPerMinute,
    // RATE_LIMIT_PER_MINUTE=0 turns every limit off (benchmarks, trusted networks).
    authFailuresPerMinute: rateLimitPerMinute === 0 ? 0 : authFailuresPerMinute,
    rateLimitStore,
    logLevel,
    publicUrl: url(env, 'PUBLIC_URL', ['https:', 'http:'])?.origin,
    corsOrigins,
    maxClaimAttempts: int(env, 'MAX_CLAIM_ATTEMPTS', 5, 1, 1000),
    graphqlIntrospection: bool(env, 'GRAPHQL_INTROSPECTION', !production),
    graphiql: bool(env, 'GRAPHIQL', !production),
    push: {
      keepAliveMs: int(env, 'SSE_KEEPALIVE_MS', 15_000, 50, 15_000),
      webhooks: {
        retrySchedule: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
        allowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
        timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
        pollMs: int(env, 'WEBHOOK_POLL_MS', 500, 10, 60_000),
      },
    },
    limits: {
      jsonBodyBytes: int(env, 'MAX_JSON_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
      uploadBytes: int(env, 'MAX_UPLOAD_BYTES', 10 * 1024 * 1024, 1024, 512 * 1024 * 1024),
      bodyTimeoutMs: int(env, 'BODY_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
      maxItemsPerUser: int(env, 'MAX_ITEMS_PER_USER', 100_000, 1, 1_000_000_000),
      maxImageBytesPerUser: int(env, 'MAX_IMAGE_BYTES_PER_USER', 1024 ** 3, 0, 2 ** 50),
      maxWaiters: int(env, 'MAX_WAITING_CLAIMS', 2000, 1, 100_000),
      maxWaitersPerCaller: int(env, 'MAX_WAITING_CLAIMS_PER_CALLER', 50, 1, 10_000),
    },
  })
}
