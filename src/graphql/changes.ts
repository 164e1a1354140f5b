import { builder } from './builder'
import { ClaimantRef, ItemRef } from './item'
import { PageInfoRef } from './connection'
import { CHANGE_ACTIONS, type ChangeRecord } from '../domain/change-record'
import { followChanges, listChanges } from '../domain/changes'

// The change feed as a connection and the live stream as a subscription (CONTRACT 8): the same
// domain functions as GET /api/saved/changes and /api/saved/events.

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v)

export const ChangeActionEnum = builder.enumType('ChangeAction', {
  values: Object.fromEntries(CHANGE_ACTIONS.map((v) => [v.toUpperCase(), { value: v }])) as Record<
    Uppercase<(typeof CHANGE_ACTIONS)[number]>,
    { value: (typeof CHANGE_ACTIONS)[number] }
  >,
})

export const ChangeRef = builder.objectRef<ChangeRecord>('Change').implement({
  description:
    'One change to one of your items. `item` is the item as it is now; null once deleted.',
  fields: (t) => ({
    seq: t.exposeString('seq', {
      description: 'Only grows, in the order the database applied the changes; usable as `after`.',
    }),
    at: t.expose('at', { type: 'DateTime' }),
    itemId: t.exposeID('itemId'),
    action: t.field({ type: ChangeActionEnum, resolve: (c) => c.action }),
    actor: t.expose('actor', { type: ClaimantRef, nullable: true }),
    item: t.expose('item', { type: ItemRef, nullable: true }),
  }),
})

interface ChangeConnectionShape {
  edges: { cursor: string; node: ChangeRecord }[]
  pageInfo: {
    hasNextPage: boolean
    hasPreviousPage: boolean
    startCursor: string | null
    endCursor: string | null
  }
}

const ChangeEdgeRef = builder
  .objectRef<ChangeConnectionShape['edges'][number]>('ChangeEdge')
  .implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.expose('node', { type: ChangeRef }),
    }),
  })

const ChangeConnectionRef = builder.objectRef<ChangeConnectionShape>('ChangeConnection').implement({
  fields: (t) => ({
    edges: t.expose('edges', { type: [ChangeEdgeRef] }),
    pageInfo: t.expose('pageInfo', {
      type: PageInfoRef,
      description: 'endCursor is always set: pass it as `after` to resume.',
    }),
  }),
})

builder.queryFields((t) => ({
  changes: t.field({
    type: ChangeConnectionRef,
    description:
      'Every change to your items, oldest first; resume with `after: pageInfo.endCursor`.',
    args: {
      first: t.arg.int({ description: '1 to 200; default 100.' }),
      after: t.arg.string(),
    },
    resolve: async (_root, a, ctx) => {
      const page = await listChanges(ctx.deps, ctx.caller, {
        after: opt(a.after),
        limit: opt(a.first),
      })
      return {
        edges: page.changes.map((node) => ({ cursor: node.seq, node })),
        pageInfo: {
          hasNextPage: page.hasMore,
          hasPreviousPage: Boolean(a.after && a.after !== '0'),
          startCursor: page.changes[0]?.seq ?? null,
          endCursor: page.nextCursor,
        },
      }
    },
  }),
}))

builder.subscriptionType({})

builder.subscriptionFields((t) => ({
  itemChanged: t.field({
    type: ChangeRef,
    description:
      'Live changes to your items (over SSE: Accept: text/event-stream). With `after`, first replays every change after that seq; without it, starts with the next change. `inbox: true`: only items with a requested action.',
    args: {
      after: t.arg.string(),
      inbox: t.arg.boolean(),
    },
    subscribe: (_root, a, ctx) =>
      followChanges(
        ctx.deps,
        ctx.caller,
        { after: opt(a.after), inbox: a.inbox ?? false },
        ctx.signal,
      ),
    resolve: (record: ChangeRecord) => record,
  }),
}))
