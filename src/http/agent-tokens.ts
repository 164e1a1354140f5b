import { Elysia, t } from 'elysia'
import type { Db } from '../db/client'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import { createAgentToken, listAgentTokens, revokeAgentToken, type CreateAgentTokenInput } from '../domain/agent-tokens'
import { jsonBody } from './items'
import { refuseUnsafeTokenName } from '../auth/tokens'
import { authentication, secured } from './auth'
import { AgentTokenListSchema, CreateAgentTokenBody, CreatedAgentTokenSchema, IdParams, documented, errors } from './schemas'

/** `/api/saved/agent-tokens`: signed-in sessions manage their personal agent tokens. */
export function agentTokenRoutes(db: Db, resolveCaller: CallerResolver, rateLimit: CallerRateLimiter) {
  return new Elysia({ prefix: '/api/saved/agent-tokens' })
    .use(authentication(resolveCaller, rateLimit))
    .get('', async ({ caller }) => ({ tokens: await listAgentTokens(db, caller) }), {
      detail: { responses: documented({ 200: AgentTokenListSchema, ...errors(401, 429) }), summary: 'List active agent tokens (signed-in session only)', tags: ['agent tokens'], ...secured },
    })
    .post('', ({ caller, body }) => {
      // Belongs in the domain's name check (src/domain/agent-tokens.ts); kept here until then.
      refuseUnsafeTokenName((body as CreateAgentTokenInput).name)
      return createAgentToken(db, caller, body as CreateAgentTokenInput)
    }, {
      detail: {
        responses: documented({ 200: CreatedAgentTokenSchema, ...errors(400, 401, 409, 413, 415, 429) }),
        summary: 'Create an agent token; the raw secret is returned once',
        tags: ['agent tokens'],
        ...secured,
        requestBody: jsonBody(CreateAgentTokenBody),
      },
    })
    .delete(
      '/:id',
      async ({ caller, params, set }) => {
        await revokeAgentToken(db, caller, params.id)
        set.status = 204
      },
      {
        params: IdParams,
        detail: { responses: documented({ 204: t.Void({ description: 'Revoked; the token stops working at once.' }), ...errors(400, 401, 404, 429) }), summary: 'Revoke an agent token', tags: ['agent tokens'], ...secured },
      },
    )
}
