import { Elysia, t } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import type { Deps } from '../domain/deps'
import { createAgentToken, listAgentTokens, revokeAgentToken } from '../domain/agent-tokens'
import { jsonBody } from './items'
import { authentication, secured } from './auth'
import { checkBody } from './body'
import {
  AgentTokenListSchema,
  CreateAgentTokenBody,
  CreatedAgentTokenSchema,
  IdParams,
  documented,
  errors,
} from './schemas'
import { agentTokenJson } from './serialize'

/** `/api/saved/agent-tokens`: signed-in sessions manage their personal agent tokens. */
export function agentTokenRoutes(
  deps: Deps,
  resolveCaller: CallerResolver,
  rateLimit: CallerRateLimiter,
) {
  return new Elysia({ prefix: '/api/saved/agent-tokens' })
    .use(authentication(resolveCaller, rateLimit))
    .get(
      '',
      async ({ caller }) => ({ tokens: (await listAgentTokens(deps, caller)).map(agentTokenJson) }),
      {
        detail: {
          responses: documented({ 200: AgentTokenListSchema, ...errors(401, 429) }),
          summary: 'List active agent tokens (signed-in session only)',
          tags: ['agent tokens'],
          ...secured,
        },
      },
    )
    .post(
      '',
      async ({ caller, body, set }) => {
        const b = checkBody(CreateAgentTokenBody, body)
        const { token, ...created } = await createAgentToken(deps, caller, {
          name: b.name,
          scopes: b.scopes,
          expiresInDays: b.expires_in_days,
        })
        // The answer holds the raw secret: no cache may keep it.
        set.headers['cache-control'] = 'no-store'
        return { ...agentTokenJson(created), token }
      },
      {
        detail: {
          responses: documented({
            200: CreatedAgentTokenSchema,
            ...errors(400, 401, 409, 413, 415, 429),
          }),
          summary: 'Create an agent token; the raw secret is returned once',
          tags: ['agent tokens'],
          ...secured,
          requestBody: jsonBody(CreateAgentTokenBody),
        },
      },
    )
    .delete(
      '/:id',
      async ({ caller, params, set }) => {
        await revokeAgentToken(deps, caller, params.id)
        set.status = 204
      },
      {
        params: IdParams,
        detail: {
          responses: documented({
            204: t.Void({
              description: 'Revoked; the token stops working at once, and its live claims end.',
            }),
            ...errors(400, 401, 404, 409, 422, 429),
          }),
          summary: 'Revoke an agent token',
          tags: ['agent tokens'],
          ...secured,
        },
      },
    )
}
