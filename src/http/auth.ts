import { Elysia } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import { rateHeaders, type CallerRateLimiter } from '../auth/rate-limit'

/**
 * Resolves the caller before validation (Elysia's transform phase), so a request without valid
 * credentials is a 401 whatever else is wrong with it. Used by every /api route plugin.
 */
export const authentication = (resolveCaller: CallerResolver, limit: CallerRateLimiter) =>
  new Elysia().derive({ as: 'scoped' }, async ({ headers, set }) => {
    const caller = await resolveCaller(headers.authorization)
    const decision = await limit(caller)
    if (decision) Object.assign(set.headers, rateHeaders(decision))
    return { caller }
  })

/** OpenAPI: every /api operation needs the bearer token. */
export const secured = { security: [{ bearerAuth: [] as string[] }] }
