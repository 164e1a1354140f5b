import { builder } from './builder'
import { ItemRef, LeaseRef } from './item'
import { ItemConnectionRef, toConnection } from './connection'
import {
  ClaimActionEnum,
  ClaimStatusFilterEnum,
  ExtractionStatusEnum,
  ItemTypeEnum,
  RequestedActionEnum,
  WorkflowStatusEnum,
} from './enums'
import { createItem, deleteItem, getItem, listItems, type ItemFilter } from '../domain/items'
import { claimNext, listInbox, type ClaimNextResult, type InboxFilter } from '../domain/inbox'
import type {
  ClaimStatusFilter,
  ExtractionStatus,
  ItemType,
  RequestedAction,
  WorkflowStatus,
} from '../domain/item'
import { updateItem } from '../domain/workflow'

// Queries and mutations on items. GraphQL's types already check the shape and its names are
// the domain's: resolvers turn absent (null) arguments into undefined and call the same domain
// functions as REST, so every rule comes out the same.

/** GraphQL's null for "not given" → the domain's undefined. */
const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v)

/** A list argument as GraphQL hands it over: absent, null (not given), or the value. */
type Arg<T> = T | null | undefined
const tagsOf = (a: { tag?: Arg<string>; tags?: Arg<string[]> }) => [
  ...(a.tag != null ? [a.tag] : []),
  ...(a.tags ?? []),
]

export interface ItemsArgs {
  first?: Arg<number>
  after?: Arg<string>
  type?: Arg<ItemType>
  status?: Arg<ExtractionStatus>
  tag?: Arg<string>
  tags?: Arg<string[]>
}

/** `items`' arguments → the domain's filter (shared with list-fast-path.ts). */
export const itemsFilter = (a: ItemsArgs): ItemFilter => ({
  type: opt(a.type),
  status: opt(a.status),
  tags: tagsOf(a),
  limit: opt(a.first),
  cursor: opt(a.after),
})

export interface InboxArgs extends ItemsArgs {
  workflowStatus?: Arg<WorkflowStatus>
  requestedAction?: Arg<RequestedAction>
  destinationKind?: Arg<string>
  destinationName?: Arg<string>
  claimStatus?: Arg<ClaimStatusFilter>
}

/** `inbox`' arguments → the domain's filter (shared with list-fast-path.ts). */
export const inboxFilter = (a: InboxArgs): InboxFilter => ({
  workflowStatus: opt(a.workflowStatus),
  requestedAction: opt(a.requestedAction),
  type: opt(a.type),
  destinationKind: opt(a.destinationKind),
  destinationName: opt(a.destinationName),
  tags: tagsOf(a),
  claimStatus: opt(a.claimStatus),
  limit: opt(a.first),
  cursor: opt(a.after),
})

builder.queryFields((t) => ({
  items: t.field({
    type: ItemConnectionRef,
    description: 'Saved items, newest first.',
    args: {
      first: t.arg.int({ description: '1 to 200; default 50.' }),
      after: t.arg.string(),
      type: t.arg({ type: ItemTypeEnum }),
      status: t.arg({ type: ExtractionStatusEnum }),
      tag: t.arg.string(),
      tags: t.arg.stringList({ description: 'Every tag must be present (AND with tag).' }),
    },
    resolve: async (_root, a, ctx) =>
      toConnection(await listItems(ctx.deps, ctx.caller, itemsFilter(a)), a.after),
  }),
  item: t.field({
    type: ItemRef,
    nullable: true,
    description: 'One item, with its signed image link; null with a NOT_FOUND error when unknown.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getItem(ctx.deps, ctx.caller, String(args.id)),
  }),
  inbox: t.field({
    type: ItemConnectionRef,
    description: 'Items with a requested action, oldest first: the work queue.',
    args: {
      first: t.arg.int({ description: '1 to 200; default 50.' }),
      after: t.arg.string(),
      workflowStatus: t.arg({ type: WorkflowStatusEnum }),
      requestedAction: t.arg({ type: RequestedActionEnum }),
      type: t.arg({ type: ItemTypeEnum }),
      destinationKind: t.arg.string(),
      destinationName: t.arg.string(),
      tag: t.arg.string(),
      tags: t.arg.stringList(),
      claimStatus: t.arg({ type: ClaimStatusFilterEnum }),
    },
    resolve: async (_root, a, ctx) =>
      toConnection(await listInbox(ctx.deps, ctx.caller, inboxFilter(a)), a.after),
  }),
}))

const CreateItemInput = builder.inputType('CreateItemInput', {
  fields: (t) => ({
    type: t.field({ type: ItemTypeEnum, required: true }),
    status: t.field({ type: ExtractionStatusEnum }),
    workflowStatus: t.field({ type: WorkflowStatusEnum }),
    title: t.string(),
    summary: t.string(),
    actionNote: t.string(),
    tags: t.stringList(),
    requestedAction: t.field({ type: RequestedActionEnum }),
    destinationKind: t.string(),
    destinationName: t.string(),
  }),
})

const CorrectionsInput = builder.inputType('CorrectionsInput', {
  description: 'Signed-in sessions only.',
  fields: (t) => ({
    title: t.string(),
    summary: t.string(),
    actionNote: t.string(),
    tags: t.stringList(),
  }),
})

const UpdateItemInput = builder.inputType('UpdateItemInput', {
  description:
    'Same semantics as PATCH /api/saved/items/{id}: claim action, then workflow status, then notes and corrections.',
  fields: (t) => ({
    workflowStatus: t.field({ type: WorkflowStatusEnum }),
    resolutionNote: t.string(),
    claimAction: t.field({ type: ClaimActionEnum }),
    leaseSeconds: t.int({ description: 'Only with claimAction CLAIM: 1 to 86400; default 300.' }),
    retryAfterSeconds: t.int({
      description:
        'Only with claimAction RELEASE: 1 to 86400; claim next passes the item over until then.',
    }),
    leaseId: t.string({
      description: 'Fencing: apply only while the caller holds this live lease (else LEASE_LOST).',
    }),
    corrections: t.field({ type: CorrectionsInput }),
  }),
})

const ClaimNextInput = builder.inputType('ClaimNextInput', {
  fields: (t) => ({
    requestedAction: t.field({ type: RequestedActionEnum }),
    type: t.field({ type: ItemTypeEnum }),
    destinationKind: t.string(),
    destinationName: t.string(),
    tag: t.string(),
    tags: t.stringList(),
    leaseSeconds: t.int({ description: '1 to 86400; default 300.' }),
    waitSeconds: t.int({ description: 'Long poll: 0 to 60; default 0.' }),
  }),
})

const ClaimNextPayload = builder.objectRef<ClaimNextResult>('ClaimNextPayload').implement({
  description:
    'The claimed item and its lease; both null when nothing was claimable by the end of the wait.',
  fields: (t) => ({
    item: t.expose('item', { type: ItemRef, nullable: true }),
    lease: t.expose('lease', { type: LeaseRef, nullable: true }),
  }),
})

builder.mutationFields((t) => ({
  createItem: t.field({
    type: ItemRef,
    description: 'Save a new item (signed-in session only). Images are uploaded through REST.',
    args: { input: t.arg({ type: CreateItemInput, required: true }) },
    // GraphQL nulls mean "not given" here, as absent JSON properties do: each takes its default.
    resolve: (_root, { input: i }, ctx) =>
      createItem(ctx.deps, ctx.caller, {
        type: i.type,
        status: i.status,
        workflowStatus: i.workflowStatus,
        title: i.title,
        summary: i.summary,
        actionNote: i.actionNote,
        tags: i.tags,
        requestedAction: i.requestedAction,
        destinationKind: i.destinationKind,
        destinationName: i.destinationName,
      }),
  }),
  updateItem: t.field({
    type: ItemRef,
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateItemInput, required: true }),
    },
    resolve: (_root, { id, input: i }, ctx) => {
      const c = i.corrections
      return updateItem(ctx.deps, ctx.caller, String(id), {
        claimAction: opt(i.claimAction),
        leaseSeconds: opt(i.leaseSeconds),
        retryAfterSeconds: opt(i.retryAfterSeconds),
        leaseId: opt(i.leaseId),
        workflowStatus: opt(i.workflowStatus),
        // An explicit null clears the note, as in JSON.
        resolutionNote: i.resolutionNote,
        corrections:
          c == null
            ? undefined
            : { title: c.title, summary: c.summary, actionNote: c.actionNote, tags: opt(c.tags) },
      })
    },
  }),
  claimNext: t.field({
    type: ClaimNextPayload,
    description:
      'Atomically claim the oldest claimable inbox item, optionally waiting for one (same as POST /api/saved/inbox/claim).',
    args: { input: t.arg({ type: ClaimNextInput }) },
    resolve: (_root, { input }, ctx) => {
      const i = input ?? {}
      return claimNext(
        ctx.deps,
        ctx.caller,
        {
          requestedAction: opt(i.requestedAction),
          type: opt(i.type),
          destinationKind: opt(i.destinationKind),
          destinationName: opt(i.destinationName),
          tags: [...(i.tag != null ? [i.tag] : []), ...(i.tags ?? [])],
          leaseSeconds: opt(i.leaseSeconds),
          waitSeconds: opt(i.waitSeconds),
        },
        ctx.signal,
      )
    },
  }),
  deleteItem: t.boolean({
    description:
      'Delete an item with its tags, history and image (signed-in session only). True when deleted.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteItem(ctx.deps, ctx.caller, String(id))
      return true
    },
  }),
}))
