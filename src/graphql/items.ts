import { builder } from './builder'
import { ItemRef, toGraphQLItem } from './item'
import { ItemConnectionRef, toConnection } from './connection'
import {
  ClaimActionEnum, ClaimStatusFilterEnum, ExtractionStatusEnum, ItemTypeEnum, RequestedActionEnum, WorkflowStatusEnum,
} from './enums'
import { createItem, getItem, listItems } from '../domain/items'
import { listInbox } from '../domain/inbox'
import { updateItem } from '../domain/workflow'

// Queries and mutations on items: each resolver turns GraphQL arguments into the REST shape
// and calls the same domain function as the REST route, so every rule comes out the same.

/** Only the arguments that were given: an absent GraphQL argument is an absent REST parameter. */
const given = <T extends Record<string, unknown>>(args: T) =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null)) as { [K in keyof T]?: NonNullable<T[K]> }

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
    resolve: async (_root, args, ctx) => {
      const { first, after, tags, ...filters } = given(args)
      const page = await listItems(ctx.deps, ctx.caller, { ...filters, tags: tags?.join(','), limit: first, cursor: after })
      return toConnection(page, after)
    },
  }),
  item: t.field({
    type: ItemRef,
    nullable: true,
    description: 'One item, with its signed image link; null with a NOT_FOUND error when unknown.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => toGraphQLItem(await getItem(ctx.deps, ctx.caller, String(args.id), ctx.baseUrl)),
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
    resolve: async (_root, args, ctx) => {
      const a = given(args)
      const page = await listInbox(ctx.deps, ctx.caller, {
        workflow_status: a.workflowStatus,
        requested_action: a.requestedAction,
        type: a.type,
        destination_kind: a.destinationKind,
        destination_name: a.destinationName,
        tag: a.tag,
        tags: a.tags?.join(','),
        claim_status: a.claimStatus,
        limit: a.first,
        cursor: a.after,
      })
      return toConnection(page, a.after)
    },
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
  description: 'Same semantics as PATCH /api/saved/items/{id}: claim action, then workflow status, then notes and corrections.',
  fields: (t) => ({
    workflowStatus: t.field({ type: WorkflowStatusEnum }),
    resolutionNote: t.string(),
    claimAction: t.field({ type: ClaimActionEnum }),
    leaseSeconds: t.int(),
    corrections: t.field({ type: CorrectionsInput }),
  }),
})

/** Keeps explicit nulls (they clear a field, as in JSON) and drops absent fields. */
const present = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

builder.mutationFields((t) => ({
  createItem: t.field({
    type: ItemRef,
    description: 'Save a new item (signed-in session only). Images are uploaded through REST.',
    args: { input: t.arg({ type: CreateItemInput, required: true }) },
    resolve: async (_root, { input }, ctx) =>
      toGraphQLItem(await createItem(
        ctx.deps,
        ctx.caller,
        present({
          type: input.type, status: input.status, workflow_status: input.workflowStatus, title: input.title,
          summary: input.summary, action_note: input.actionNote, tags: input.tags, requested_action: input.requestedAction,
          destination_kind: input.destinationKind, destination_name: input.destinationName,
        }),
        undefined,
        ctx.baseUrl,
        ctx.deps.maxUploadBytes,
      )),
  }),
  updateItem: t.field({
    type: ItemRef,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateItemInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => {
      const c = input.corrections
      const body = present({
        workflow_status: input.workflowStatus,
        resolution_note: input.resolutionNote,
        claim_action: input.claimAction,
        lease_seconds: input.leaseSeconds,
        corrections: c === undefined || c === null ? c : present({ title: c.title, summary: c.summary, action_note: c.actionNote, tags: c.tags }),
      })
      return toGraphQLItem(await updateItem(ctx.deps.db, ctx.caller, String(id), body))
    },
  }),
}))
