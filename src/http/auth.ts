import { Elysia } from 'elysia'
import type { CallerResolver } from '../auth/caller'

/**
 * Resolves the caller before validation (Elysia's transform phase), so a request without valid
 * credentials is a 401 whatever else is wrong with it. Used by every /api route plugin.
 */
export const authentication = (resolveCaller: CallerResolver) =>
  new Elysia().derive({ as: 'scoped' }, async ({ headers }) => ({
    caller: await resolveCaller(headers.authorization),
  }))

/** OpenAPI: every /api operation needs the bearer token. */
export const secured = { security: [{ bearerAuth: [] as string[] }] }
