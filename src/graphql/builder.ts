import SchemaBuilder from '@pothos/core'
import type DataLoader from 'dataloader'
import type { Caller } from '../domain/caller'
import type { ItemDeps } from '../domain/items'
import type { HistoryEvent } from '../domain/workflow'

/** What every resolver gets: the caller, the domain's dependencies, and per-request loaders. */
export interface GraphQLContext {
  caller: Caller
  deps: ItemDeps & { maxUploadBytes: number }
  baseUrl: string
  loaders: {
    history: DataLoader<string, HistoryEvent[]>
    imageUrl: DataLoader<string, string | null>
  }
}

// The builder holds no types: each type lives in its own file (Pothos app-layout guide).
export const builder = new SchemaBuilder<{
  Context: GraphQLContext
  Scalars: { DateTime: { Input: string; Output: string } }
  DefaultFieldNullability: false
}>({ defaultFieldNullability: false })

builder.scalarType('DateTime', {
  description: 'ISO 8601 timestamp in UTC with millisecond precision.',
  serialize: (value) => value,
  parseValue: (value) => String(value),
})

builder.queryType({})
builder.mutationType({})
