import { builder } from './builder'
import type { Claimant } from '../domain/caller'
import type { Lease } from '../domain/inbox'
import type { Item, ItemWithImage } from '../domain/item'
import type { HistoryEvent } from '../domain/workflow'
import {
  ClaimantKindEnum,
  ClaimStatusEnum,
  ExtractionStatusEnum,
  ItemTypeEnum,
  RequestedActionEnum,
  WorkflowStatusEnum,
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
    at: t.expose('at', { type: 'DateTime' }),
    actor: t.expose('actor', { type: ClaimantRef }),
    action: t.exposeString('action', {
      description: 'claim, renew, release, done, reopen, note, correction or revoke.',
    }),
    from: t.exposeString('from', { nullable: true }),
    to: t.exposeString('to', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
  }),
})

/**
 * The domain's Item is already camelCase: every scalar field is a plain property read, which
 * graphql-jit compiles inline instead of calling a resolver per field per item.
 */
export const ItemRef = builder
  .objectRef<Item & { sourceImageUrl?: ItemWithImage['sourceImageUrl'] }>('Item')
  .implement({
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
      leaseId: t.exposeString('leaseId', {
        nullable: true,
        description: "The caller's own live lease id; null for everyone else.",
      }),
      attempts: t.exposeInt('attempts', {
        description: 'Fresh claims since the item was created, reopened or revoked.',
      }),
      availableAt: t.expose('availableAt', {
        type: 'DateTime',
        nullable: true,
        description: 'Set by a delayed release.',
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
      sourceImageUrl: t.string({
        nullable: true,
        description:
          'Signed link to the source image; works without a bearer token until it expires.',
        // Batched per request: a page of items costs one query, not one per item.
        resolve: (i, _args, ctx) =>
          i.sourceImageUrl !== undefined ? i.sourceImageUrl : ctx.loaders.imageUrl.load(i.id),
      }),
      history: t.field({
        type: [HistoryEventRef],
        description: 'Every workflow change, oldest first.',
        resolve: (i, _args, ctx) => ctx.loaders.history.load(i.id),
      }),
    }),
  })

export const LeaseRef = builder.objectRef<Lease>('Lease').implement({
  description: 'A fresh claim: send its id as leaseId to fence later changes.',
  fields: (t) => ({
    id: t.exposeString('id'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    attempt: t.exposeInt('attempt'),
  }),
})
