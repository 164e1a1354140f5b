// Prints a session JWT for a user id, signed with the configured (or development) secret.
// Usage: npm run token -- <user-id> [--days N]
import { SignJWT } from 'jose'
import { loadConfig, prepareDataDir } from '../src/config'

const [userId, flag, value] = process.argv.slice(2)
if (!userId || userId.startsWith('-')) {
  console.error('usage: npm run token -- <user-id> [--days N]')
  process.exit(2)
}
const days = flag === '--days' ? Number(value) : 30
prepareDataDir()
const config = loadConfig()
if (config.jwt.kind !== 'secret') {
  console.error('JWT_JWKS_URL is set: session tokens come from your identity provider, not from this script.')
  process.exit(2)
}
if (!Number.isFinite(days) || days <= 0 || days * 86400 > config.jwt.maxAgeSeconds) {
  console.error(`--days must be more than 0 and at most JWT_MAX_AGE_SECONDS (${config.jwt.maxAgeSeconds / 86400} days)`)
  process.exit(2)
}
let jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(userId).setIssuedAt().setExpirationTime(`${days}d`)
if (config.jwt.issuer) jwt = jwt.setIssuer(config.jwt.issuer)
if (config.jwt.audience) jwt = jwt.setAudience(config.jwt.audience)
console.log(await jwt.sign(config.jwt.secret))
