import { builder } from './builder'
import { ItemRef } from './item'
import type { Item } from '../domain/item'
import type { Page } from '../domain/page'

interface ConnectionShape<N> {
  edges: { cursor: string; node: N }[]
  pageInfo: {
    hasNextPage: boolean
    hasPreviousPage: boolean
    startCursor: string | null
    endCursor: string | null
  }
}

type ItemConnectionShape = ConnectionShape<Item>

/**
 * A domain page → a Relay connection whose cursors are the REST cursors. The nodes are Items,
 * or an item's GraphQL values as the database rendered them (list-fast-path.ts).
 */
export function toConnection<N>(
  page: Page<N>,
  after: string | null | undefined,
): ConnectionShape<N> {
  const edges = page.items.map((node, i) => ({ cursor: page.cursorAt(i), node }))
  return {
    edges,
    pageInfo: {
      hasNextPage: page.nextCursor !== null,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  }
}

export const PageInfoRef = builder
  .objectRef<ItemConnectionShape['pageInfo']>('PageInfo')
  .implement({
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
    node: t.expose('node', { type: ItemRef }),
  }),
})

export const ItemConnectionRef = builder
  .objectRef<ItemConnectionShape>('ItemConnection')
  .implement({
    fields: (t) => ({
      edges: t.expose('edges', { type: [ItemEdgeRef] }),
      pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
    }),
  })
