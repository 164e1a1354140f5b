import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql'
import { builder } from './builder'
// Each import registers its types and fields on the builder.
import './enums'
import './item'
import './connection'
import './items'
import './agent-token'
import './changes'
import './webhooks'

let schema: GraphQLSchema | undefined

/** The schema holds no per-app state (that lives in the context), so it is built once. */
export function graphqlSchema(): GraphQLSchema {
  return (schema ??= builder.toSchema())
}

/** The SDL checked in as schema/schema.graphql. */
export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(graphqlSchema())) + '\n'
}
