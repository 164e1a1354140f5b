import { AppError } from '../errors'

export const AGENT_TOKEN_SCOPES = ['read_items', 'update_workflow_status'] as const
export type AgentTokenScope = (typeof AGENT_TOKEN_SCOPES)[number]

/**
 * Who is asking. A signed-in user holds every scope; an agent token holds the scopes it was
 * created with. Every domain function takes the caller and reads only `caller.userId`'s rows.
 */
export type Caller =
  | { kind: 'user'; userId: string }
  | {
      kind: 'agent_token'
      userId: string
      tokenId: string
      tokenName: string
      scopes: readonly AgentTokenScope[]
      /** A lease never outlives the token that holds it. */
      expiresAt: number
    }

/** Who holds a claim or made a change. */
export interface Claimant {
  kind: 'agent_token' | 'user'
  id: string
  name: string | null
}

/** The claimant identity of a caller: two tokens of one user are two claimants. */
export function claimantOf(caller: Caller): Claimant {
  return caller.kind === 'user'
    ? { kind: 'user', id: caller.userId, name: null }
    : { kind: 'agent_token', id: caller.tokenId, name: caller.tokenName }
}

/** The scopes a caller holds: a signed-in user holds every scope. */
export function scopesOf(caller: Caller): readonly AgentTokenScope[] {
  return caller.kind === 'user' ? AGENT_TOKEN_SCOPES : caller.scopes
}

/** Whether the caller holds a scope (the one place that says a signed-in user holds them all). */
export const hasScope = (caller: Caller, scope: AgentTokenScope): boolean =>
  scopesOf(caller).includes(scope)

/** Scope rule (CONTRACT 1): a missing scope is 403 insufficient_scope (each front end adds its challenge). */
export function requireScope(caller: Caller, scope: AgentTokenScope): void {
  if (hasScope(caller, scope)) return
  throw new AppError('insufficient_scope', `This token lacks the "${scope}" scope.`, {
    required_scope: scope,
  })
}

/** Session-only operations (agent-token management, item creation) refuse agent tokens. */
export function requireSession(
  caller: Caller,
): asserts caller is Extract<Caller, { kind: 'user' }> {
  if (caller.kind === 'user') return
  throw new AppError(
    'session_required',
    'This operation needs a signed-in session; agent tokens are not accepted.',
  )
}
