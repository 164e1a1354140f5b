import { builder } from './builder'
import { ItemRef, toGraphQLItem, type GraphQLItem } from './item'
import { itemCursors, type Page } from '../domain/items'

interface ItemConnectionShape {
  edges: { cursor: string; node: GraphQLItem }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

/** A domain page → a Relay connection whose cursors are the REST cursors. */
export function toConnection(page: Page, after: string | null | undefined): ItemConnectionShape {
  const cursors = itemCursors(page)
  const edges = page.items.map((item, i) => ({ cursor: cursors[i]!, node: toGraphQLItem(item) }))
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
    node: t.expose('node', { type: ItemRef }),
  }),
})

export const ItemConnectionRef = builder.objectRef<ItemConnectionShape>('ItemConnection').implement({
  fields: (t) => ({
    edges: t.expose('edges', { type: [ItemEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
})
