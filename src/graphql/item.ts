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

/** The item as the caller sees it: the REST item in camelCase, with history and image link. */
export const ItemRef = builder.objectRef<ItemView>('Item').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.field({ type: ItemTypeEnum, resolve: (i) => i.type }),
    status: t.field({ type: ExtractionStatusEnum, resolve: (i) => i.status }),
    workflowStatus: t.field({ type: WorkflowStatusEnum, resolve: (i) => i.workflow_status }),
    title: t.exposeString('title', { nullable: true }),
    summary: t.exposeString('summary', { nullable: true }),
    actionNote: t.exposeString('action_note', { nullable: true }),
    resolutionNote: t.exposeString('resolution_note', { nullable: true }),
    tags: t.exposeStringList('tags'),
    requestedAction: t.field({ type: RequestedActionEnum, nullable: true, resolve: (i) => i.requested_action }),
    destinationKind: t.exposeString('destination_kind', { nullable: true }),
    destinationName: t.exposeString('destination_name', { nullable: true }),
    claimStatus: t.field({ type: ClaimStatusEnum, resolve: (i) => i.claim_status }),
    claimedBy: t.field({ type: ClaimantRef, nullable: true, resolve: (i) => i.claimed_by }),
    leaseExpiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (i) => i.lease_expires_at }),
    createdAt: t.field({ type: 'DateTime', resolve: (i) => i.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (i) => i.updated_at }),
    sourceImageUrl: t.string({
      nullable: true,
      description: 'Signed link to the source image; works without a bearer token until it expires.',
      // Batched per request: a page of items costs one query, not one per item.
      resolve: (i, _args, ctx) => (i.source_image_url !== undefined ? i.source_image_url : ctx.loaders.imageUrl.load(i.id)),
    }),
    history: t.field({
      type: [HistoryEventRef],
      description: 'Every workflow change, oldest first.',
      resolve: (i, _args, ctx) => ctx.loaders.history.load(i.id),
    }),
  }),
})
