// Prints a session JWT for a user id, signed with the configured (or development) secret.
// Usage: npm run token -- <user-id> [--days N]
import { parseArgs } from 'node:util'
import { SignJWT } from 'jose'
import { ConfigError, loadConfig, prepareDataDir } from '../src/config'

const USAGE = 'usage: npm run token -- <user-id> [--days N]  (N: whole days, 1 to 365; default 30)'
const MAX_DAYS = 365

/** A one-line message and exit 2: a wrong invocation is not a crash, and never a token. */
function refuse(problem: string): never {
  console.error(`${problem}; ${USAGE}`)
  process.exit(2)
}

const parse = () =>
  parseArgs({
    args: process.argv.slice(2),
    options: { days: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  })
let parsed: ReturnType<typeof parse>
try {
  parsed = parse()
} catch (error) {
  // parseArgs's message is a sentence (its stack is noise here); an unknown flag's also explains `--`.
  const { code, message } = error as { code?: string; message: string }
  refuse(
    code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
      ? `unknown option ${/'[^']+'/.exec(message)?.[0] ?? ''}`
      : (message.split('\n')[0] ?? message),
  )
}
if (parsed.values.help) {
  console.log(USAGE)
  process.exit(0)
}
const [userId, ...extra] = parsed.positionals
if (!userId) refuse('missing <user-id>')
if (extra.length > 0) refuse(`unexpected argument "${extra[0]}"`)
const daysText = parsed.values.days ?? '30'
if (!/^\d+$/.test(daysText) || Number(daysText) < 1 || Number(daysText) > MAX_DAYS) {
  refuse(`--days must be a whole number from 1 to ${MAX_DAYS}, got "${daysText}"`)
}
const days = Number(daysText)

let config: ReturnType<typeof loadConfig>
try {
  prepareDataDir()
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) refuse(`configuration error: ${error.message}`)
  throw error
}
if (config.jwt.kind !== 'secret') {
  console.error(
    'JWT_JWKS_URL is set: session tokens come from your identity provider, not from this script.',
  )
  process.exit(2)
}
if (!Number.isFinite(days) || days <= 0 || days * 86400 > config.jwt.maxAgeSeconds) {
  console.error(
    `--days must be more than 0 and at most JWT_MAX_AGE_SECONDS (${config.jwt.maxAgeSeconds / 86400} days)`,
  )
  process.exit(2)
}
let jwt = new SignJWT({})
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setSubject(userId)
  .setIssuedAt()
  .setExpirationTime(`${days}d`)
if (config.jwt.issuer) jwt = jwt.setIssuer(config.jwt.issuer)
if (config.jwt.audience) jwt = jwt.setAudience(config.jwt.audience)
console.log(await jwt.sign(config.jwt.secret))
