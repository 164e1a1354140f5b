import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { CallerResolver } from '../auth/caller'
import { rateHeaders, UNKNOWN_CLIENT, type CallerRateLimiter } from '../auth/rate-limit'

/**
 * The peer's address as Bun saw the socket (never a header a client could forge). Without a
 * server — `app.handle` in tests — every request shares one fixed key.
 */
export function clientAddress(server: Pick<Server<unknown>, 'requestIP'> | null | undefined, request: Request): string {
  return server?.requestIP(request)?.address ?? UNKNOWN_CLIENT
}

/**
 * Resolves the caller before validation (Elysia's transform phase), so a request without valid
 * credentials is a 401 whatever else is wrong with it. Used by every /api route plugin.
 */
export const authentication = (resolveCaller: CallerResolver, limit: CallerRateLimiter) =>
  new Elysia().derive({ as: 'scoped' }, async ({ headers, set, server, request }) => {
    const caller = await resolveCaller(headers.authorization, clientAddress(server, request), request)
    const decision = await limit(caller)
    if (decision) Object.assign(set.headers, rateHeaders(decision))
    return { caller }
  })

/** OpenAPI: every /api operation needs the bearer token. */
export const secured = { security: [{ bearerAuth: [] as string[] }] }
