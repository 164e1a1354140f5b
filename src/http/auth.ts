import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { CallerResolver } from '../auth/caller'
import { rateHeaders, UNKNOWN_CLIENT, type CallerRateLimiter } from '../auth/rate-limit'

/**
 * An IPv6 address as its /64 network: one host usually holds a whole /64 and can rotate through
 * it at will, so a per-address limit keyed on full IPv6 addresses would limit nothing.
 * IPv4 (and IPv4-mapped IPv6) addresses stay as they are.
 */
export function addressKey(address: string): string {
  if (!address.includes(':') || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address))
    return address.replace(/^::ffff:/i, '')
  const [head = '', tail = ''] = (address.split('%')[0] ?? '').split('::')
  const left = head ? head.split(':') : []
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : []
  const groups = [
    ...left,
    ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'),
    ...right,
  ]
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`
}

/**
 * The peer's address as Bun saw the socket (never a header a client could forge), IPv6 by /64.
 * Without a server — `app.handle` in tests — every request shares one fixed key.
 */
export function clientAddress(
  server: Pick<Server<unknown>, 'requestIP'> | null | undefined,
  request: Request,
): string {
  const address = server?.requestIP(request)?.address
  return address ? addressKey(address) : UNKNOWN_CLIENT
}

/**
 * Resolves the caller before validation (Elysia's transform phase), so a request without valid
 * credentials is a 401 whatever else is wrong with it. Used by every /api route plugin.
 */
export const authentication = (resolveCaller: CallerResolver, limit: CallerRateLimiter) =>
  new Elysia().derive({ as: 'scoped' }, async ({ headers, set, server, request }) => {
    const caller = await resolveCaller(
      headers.authorization,
      clientAddress(server, request),
      request,
    )
    const decision = await limit(caller)
    if (decision) Object.assign(set.headers, rateHeaders(decision))
    return { caller }
  })

/** OpenAPI: every /api operation needs the bearer token. */
export const secured = { security: [{ bearerAuth: [] as string[] }] }
