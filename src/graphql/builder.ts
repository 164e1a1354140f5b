import SchemaBuilder from '@pothos/core'
import type DataLoader from 'dataloader'
import type { Caller } from '../domain/caller'
import type { Deps } from '../domain/deps'
import type { HistoryEvent } from '../domain/workflow'

/** What every resolver gets: the caller, the domain's dependencies, and per-request loaders. */
export interface GraphQLContext {
  caller: Caller
  deps: Deps
  /** Aborted when the client goes away (ends a long-poll early). */
  signal?: AbortSignal
  loaders: {
    history: DataLoader<string, HistoryEvent[]>
    imageUrl: DataLoader<string, string | null>
  }
}

// The builder holds no types: each type lives in its own file (Pothos app-layout guide).
export const builder = new SchemaBuilder<{
  Context: GraphQLContext
  Scalars: { DateTime: { Input: string; Output: number } }
  DefaultFieldNullability: false
}>({ defaultFieldNullability: false })

// Domain timestamps are epoch milliseconds; GraphQL, like REST, speaks ISO 8601.
builder.scalarType('DateTime', {
  description: 'ISO 8601 timestamp in UTC with millisecond precision.',
  serialize: (value) => new Date(value as number).toISOString(),
  parseValue: (value) => String(value),
})

builder.queryType({})
builder.mutationType({})
