import { builder } from './builder'
import { refuseUnsafeTokenName } from '../auth/tokens'
import { AgentTokenScopeEnum } from './enums'
import { createAgentToken, listAgentTokens, revokeAgentToken, type AgentTokenView } from '../domain/agent-tokens'

export const AgentTokenRef = builder.objectRef<AgentTokenView>('AgentToken').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    scopes: t.field({ type: [AgentTokenScopeEnum], resolve: (tok) => tok.scopes }),
    createdAt: t.field({ type: 'DateTime', resolve: (tok) => tok.created_at }),
    expiresAt: t.field({ type: 'DateTime', resolve: (tok) => tok.expires_at }),
    lastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (tok) => tok.last_used_at }),
    tokenHint: t.exposeString('token_hint', { description: 'The last 4 characters of the token.' }),
  }),
})

const CreatedAgentTokenRef = builder.objectRef<{ agentToken: AgentTokenView; token: string }>('CreatedAgentToken').implement({
  fields: (t) => ({
    agentToken: t.field({ type: AgentTokenRef, resolve: (c) => c.agentToken }),
    token: t.exposeString('token', { description: 'The raw secret (sat_…). Shown once; store it now.' }),
  }),
})

const CreateAgentTokenInput = builder.inputType('CreateAgentTokenInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    scopes: t.field({ type: [AgentTokenScopeEnum], required: true }),
    expiresInDays: t.string({ description: 'Whole number of days, 1 to 365; default "90".' }),
  }),
})

builder.queryFields((t) => ({
  agentTokens: t.field({
    type: [AgentTokenRef],
    description: 'Active personal agent tokens (signed-in session only).',
    resolve: (_root, _args, ctx) => listAgentTokens(ctx.deps.db, ctx.caller),
  }),
}))

builder.mutationFields((t) => ({
  createAgentToken: t.field({
    type: CreatedAgentTokenRef,
    args: { input: t.arg({ type: CreateAgentTokenInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      // Belongs in the domain's name check (src/domain/agent-tokens.ts); kept here until then.
      refuseUnsafeTokenName(input.name)
      const { token, ...agentToken } = await createAgentToken(ctx.deps.db, ctx.caller, {
        name: input.name,
        scopes: input.scopes,
        ...(input.expiresInDays == null ? {} : { expires_in_days: input.expiresInDays }),
      })
      return { agentToken, token }
    },
  }),
  revokeAgentToken: t.boolean({
    description: 'Revokes a token at once. True when it was revoked.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await revokeAgentToken(ctx.deps.db, ctx.caller, String(id))
      return true
    },
  }),
}))
