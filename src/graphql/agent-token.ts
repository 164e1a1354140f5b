import { builder } from './builder'
import { AgentTokenScopeEnum } from './enums'
import {
  createAgentToken,
  listAgentTokens,
  revokeAgentToken,
  type AgentToken,
} from '../domain/agent-tokens'

export const AgentTokenRef = builder.objectRef<AgentToken>('AgentToken').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    scopes: t.field({ type: [AgentTokenScopeEnum], resolve: (tok) => tok.scopes }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    tokenHint: t.exposeString('tokenHint', { description: 'The last 4 characters of the token.' }),
  }),
})

const CreatedAgentTokenRef = builder
  .objectRef<{ agentToken: AgentToken; token: string }>('CreatedAgentToken')
  .implement({
    fields: (t) => ({
      agentToken: t.field({ type: AgentTokenRef, resolve: (c) => c.agentToken }),
      token: t.exposeString('token', {
        description: 'The raw secret (sat_…). Shown once; store it now.',
      }),
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
    // Nullable, so that a caller refused this field still gets the other fields of its query.
    nullable: true,
    description: 'Active personal agent tokens (signed-in session only).',
    resolve: (_root, _args, ctx) => listAgentTokens(ctx.deps, ctx.caller),
  }),
}))

builder.mutationFields((t) => ({
  createAgentToken: t.field({
    type: CreatedAgentTokenRef,
    args: { input: t.arg({ type: CreateAgentTokenInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { token, ...agentToken } = await createAgentToken(ctx.deps, ctx.caller, {
        name: input.name,
        scopes: input.scopes,
        expiresInDays: input.expiresInDays ?? undefined,
      })
      return { agentToken, token }
    },
  }),
  revokeAgentToken: t.boolean({
    description: 'Revokes a token at once. True when it was revoked.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await revokeAgentToken(ctx.deps, ctx.caller, String(id))
      return true
    },
  }),
}))
