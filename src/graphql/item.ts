import { builder } from './builder'
import type { Claimant, ItemView } from '../domain/item-view'
import type { HistoryEvent } from '../domain/workflow'
import {
  ClaimantKindEnum, ClaimStatusEnum, ExtractionStatusEnum, ItemTypeEnum, RequestedActionEnum, WorkflowStatusEnum,
} from './enums'

export const ClaimantRef = builder.objectRef<Claimant>('Claimant').implement({
  description: 'Who holds a claim or made a change: an agent token or the signed-in user.',
  fields: (t) => ({
    kind: t.field({ type: ClaimantKindEnum, resolve: (c) => c.kind }),
    id: t.exposeString('id'),
    name: t.exposeString('name', { nullable: true }),
  }),
})

export const HistoryEventRef = builder.objectRef<HistoryEvent>('HistoryEvent').implement({
  fields: (t) => ({
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
    actor: t.field({ type: ClaimantRef, resolve: (e) => e.actor }),
    action: t.exposeString('action', { description: 'claim, renew, release, done, reopen, note or correction.' }),
    from: t.exposeString('from', { nullable: true }),
    to: t.exposeString('to', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
  }),
})

/**
 * The GraphQL shape of an item: the domain's ItemView under camelCase names. Built once per
 * item so every scalar field is a plain property read, which graphql-jit compiles inline
 * instead of calling a resolver per field per item.
 */
export interface GraphQLItem {
  id: string
  type: ItemView['type']
  status: ItemView['status']
  workflowStatus: ItemView['workflow_status']
  title: string | null
  summary: string | null
  actionNote: string | null
  resolutionNote: string | null
  tags: string[]
  requestedAction: ItemView['requested_action']
  destinationKind: string | null
  destinationName: string | null
  claimStatus: ItemView['claim_status']
  claimedBy: Claimant | null
  leaseExpiresAt: string | null
  createdAt: string
  updatedAt: string
  sourceImageUrl?: string | null
}

export function toGraphQLItem(i: ItemView): GraphQLItem {
  return {
    id: i.id, type: i.type, status: i.status, workflowStatus: i.workflow_status, title: i.title, summary: i.summary,
    actionNote: i.action_note, resolutionNote: i.resolution_note, tags: i.tags, requestedAction: i.requested_action,
    destinationKind: i.destination_kind, destinationName: i.destination_name, claimStatus: i.claim_status,
    claimedBy: i.claimed_by, leaseExpiresAt: i.lease_expires_at, createdAt: i.created_at, updatedAt: i.updated_at,
    ...(i.source_image_url === undefined ? {} : { sourceImageUrl: i.source_image_url }),
  }
}

export const ItemRef = builder.objectRef<GraphQLItem>('Item').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.expose('type', { type: ItemTypeEnum }),
    status: t.expose('status', { type: ExtractionStatusEnum }),
    workflowStatus: t.expose('workflowStatus', { type: WorkflowStatusEnum }),
    title: t.exposeString('title', { nullable: true }),
    summary: t.exposeString('summary', { nullable: true }),
    actionNote: t.exposeString('actionNote', { nullable: true }),
    resolutionNote: t.exposeString('resolutionNote', { nullable: true }),
    tags: t.exposeStringList('tags'),
    requestedAction: t.expose('requestedAction', { type: RequestedActionEnum, nullable: true }),
    destinationKind: t.exposeString('destinationKind', { nullable: true }),
    destinationName: t.exposeString('destinationName', { nullable: true }),
    claimStatus: t.expose('claimStatus', { type: ClaimStatusEnum }),
    claimedBy: t.expose('claimedBy', { type: ClaimantRef, nullable: true }),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    sourceImageUrl: t.string({
      nullable: true,
      description: 'Signed link to the source image; works without a bearer token until it expires.',
      // Batched per request: a page of items costs one query, not one per item.
      resolve: (i, _args, ctx) => (i.sourceImageUrl !== undefined ? i.sourceImageUrl : ctx.loaders.imageUrl.load(i.id)),
    }),
    history: t.field({
      type: [HistoryEventRef],
      description: 'Every workflow change, oldest first.',
      resolve: (i, _args, ctx) => ctx.loaders.history.load(i.id),
    }),
  }),
})
