import { builder } from './builder'
import { ItemRef } from './item'
import { encodeCursor } from '../domain/cursor'
import type { Page } from '../domain/items'
import type { ItemView } from '../domain/item-view'

interface ItemConnectionShape {
  edges: { cursor: string; node: ItemView }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

/** A domain page → a Relay connection whose cursors are the REST cursors. */
export function toConnection(page: Page, after: string | null | undefined): ItemConnectionShape {
  const edges = page.items.map((node) => ({ cursor: encodeCursor({ createdAt: Date.parse(node.created_at), id: node.id }), node }))
  return {
    edges,
    pageInfo: {
      hasNextPage: page.next_cursor !== null,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  }
}

const PageInfoRef = builder.objectRef<ItemConnectionShape['pageInfo']>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
    startCursor: t.exposeString('startCursor', { nullable: true }),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
})

const ItemEdgeRef = builder.objectRef<ItemConnectionShape['edges'][number]>('ItemEdge').implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.field({ type: ItemRef, resolve: (e) => e.node }),
  }),
})

export const ItemConnectionRef = builder.objectRef<ItemConnectionShape>('ItemConnection').implement({
  fields: (t) => ({
    edges: t.field({ type: [ItemEdgeRef], resolve: (c) => c.edges }),
    pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
  }),
})
