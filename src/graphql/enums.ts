import { builder } from './builder'
import { AGENT_TOKEN_SCOPES } from '../domain/caller'
import {
  CLAIM_STATUS_FILTERS,
  CLAIM_STATUSES,
  EXTRACTION_STATUSES,
  ITEM_TYPES,
  REQUESTED_ACTIONS,
  WORKFLOW_STATUSES,
} from '../domain/item'

/** A GraphQL enum whose UPPER_CASE names carry the domain's lowercase values. */
function domainEnum<const T extends string>(
  name: string,
  values: readonly T[],
  description?: string,
) {
  return builder.enumType(name, {
    description,
    values: Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<
      Uppercase<T>,
      { value: T }
    >,
  })
}

export const ItemTypeEnum = domainEnum('ItemType', ITEM_TYPES)
export const ExtractionStatusEnum = domainEnum(
  'ExtractionStatus',
  EXTRACTION_STATUSES,
  'Extraction status of an item.',
)
export const WorkflowStatusEnum = domainEnum('WorkflowStatus', WORKFLOW_STATUSES)
export const RequestedActionEnum = domainEnum('RequestedAction', REQUESTED_ACTIONS)
export const ClaimStatusEnum = domainEnum(
  'ClaimStatus',
  CLAIM_STATUSES,
  'As seen by the caller: CLAIMED means held by someone else.',
)
export const ClaimStatusFilterEnum = domainEnum('ClaimStatusFilter', CLAIM_STATUS_FILTERS)
export const ClaimActionEnum = domainEnum(
  'ClaimAction',
  ['claim', 'release', 'revoke'] as const,
  'REVOKE: the signed-in owner ends any claim.',
)
export const ClaimantKindEnum = domainEnum('ClaimantKind', ['agent_token', 'user'] as const)
export const AgentTokenScopeEnum = domainEnum('AgentTokenScope', AGENT_TOKEN_SCOPES)
