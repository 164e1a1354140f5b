import {
  getArgumentValues,
  getVariableValues,
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql'
import { listInbox } from '../domain/inbox'
import {
  AS_GRAPHQL_VALUES,
  GRAPHQL_CLAIM_VALUES,
  GRAPHQL_VALUES,
  type GraphQLValues,
} from '../domain/item-pages'
import { listItems } from '../domain/items'
import type { GraphQLContext } from './builder'
import { toConnection } from './connection'
import { inboxFilter, itemsFilter, type InboxArgs, type ItemsArgs } from './items'

// The commonest GraphQL request — one page of `items` or `inbox` with scalar item fields — is
// answered from each item's GraphQL values as the database stores them (`items.gql`, kept by
// triggers like REST's documents) plus the caller's claim view computed in the same read, with
// the query's keys written around them: no Item object is built, no field resolved or
// serialised per item. It is the same domain call as the resolvers' (`listItems` / `listInbox`
// with the same filter), read differently. Anything the plan does not cover — another root
// field, fragments, directives, a repeated key, image links, history, an error — goes to the
// executor, which answers as it always has; test/graphql-fast-path.test.ts proves the two
// answers identical byte for byte.

/** Where each value sits in a row the reader returns. */
const VALUE_AT = new Map<string, number>(
  [...GRAPHQL_VALUES, ...GRAPHQL_CLAIM_VALUES].map((name, i) => [name, i]),
)
const CLAIM_STATUS_AT = VALUE_AT.get('claimStatus') ?? -1

/** One key of an object in the answer, in the query's order. */
type Part =
  | { prefix: string; kind: 'literal'; text: string }
  | { prefix: string; kind: 'value'; at: number }
  | { prefix: string; kind: 'claimant'; parts: Part[] }
  | { prefix: string; kind: 'edges' | 'node' | 'pageInfo'; parts: Part[] }
  | { prefix: string; kind: 'cursor' }
  | { prefix: string; kind: 'info'; field: keyof PageInfo }

interface PageInfo {
  hasNextPage: boolean
  hasPreviousPage: boolean
  startCursor: string | null
  endCursor: string | null
}

interface Plan {
  field: 'items' | 'inbox'
  root: FieldNode
  /** `{"data":{"<key>":` */
  head: string
  connection: Part[]
}

/** The fields of a selection, in order, if all are plain (no fragment, no directive), each key once. */
function plainFields(set: SelectionSetNode | undefined): FieldNode[] | null {
  if (!set) return null
  const keys = new Set<string>()
  const fields: FieldNode[] = []
  for (const s of set.selections) {
    if (s.kind !== Kind.FIELD || s.directives?.length) return null
    const key = s.alias?.value ?? s.name.value
    if (keys.has(key)) return null
    keys.add(key)
    fields.push(s)
  }
  return fields
}

/** `{"key":` for the first key of an object, `,"key":` after it. GraphQL names need no escaping. */
const prefixes = (fields: FieldNode[]) =>
  fields.map((f, i) => `${i === 0 ? '{' : ','}"${f.alias?.value ?? f.name.value}":`)

/** Plans a selection on an object type: `each` maps one field to its part, or null to decline. */
function planObject(
  set: SelectionSetNode | undefined,
  typename: string,
  each: (field: FieldNode, prefix: string) => Part | null,
): Part[] | null {
  const fields = plainFields(set)
  if (!fields?.length) return null
  const keys = prefixes(fields)
  const parts: Part[] = []
  for (const [i, f] of fields.entries()) {
    const prefix = keys[i] ?? ''
    const part =
      f.name.value === '__typename'
        ? { prefix, kind: 'literal' as const, text: `"${typename}"` }
        : each(f, prefix)
    if (!part) return null
    parts.push(part)
  }
  return parts
}

function planOf(operation: OperationDefinitionNode): Plan | null {
  if (operation.operation !== 'query' || operation.directives?.length) return null
  const roots = plainFields(operation.selectionSet)
  const root = roots?.[0]
  if (!root || roots.length !== 1) return null
  const field = root.name.value
  if (field !== 'items' && field !== 'inbox') return null
  const connection = planObject(root.selectionSet, 'ItemConnection', (c, prefix) => {
    if (c.name.value === 'pageInfo') {
      const parts = planObject(c.selectionSet, 'PageInfo', (p, prefix) =>
        ['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor'].includes(p.name.value)
          ? { prefix, kind: 'info', field: p.name.value as keyof PageInfo }
          : null,
      )
      return parts && { prefix, kind: 'pageInfo', parts }
    }
    if (c.name.value !== 'edges') return null
    const parts = planObject(c.selectionSet, 'ItemEdge', (e, prefix) => {
      if (e.name.value === 'cursor') return { prefix, kind: 'cursor' }
      if (e.name.value !== 'node') return null
      const parts = planObject(e.selectionSet, 'Item', (f, prefix) => {
        if (f.name.value === 'claimedBy') {
          const parts = planObject(f.selectionSet, 'Claimant', (k, prefix) => {
            const at = VALUE_AT.get(`claimant.${k.name.value}`)
            return at === undefined ? null : { prefix, kind: 'value', at }
          })
          return parts && { prefix, kind: 'claimant', parts }
        }
        // sourceImageUrl and history are not among the values: the executor answers those.
        const at = VALUE_AT.get(f.name.value)
        return at === undefined ? null : { prefix, kind: 'value', at }
      })
      return parts && { prefix, kind: 'node', parts }
    })
    return parts && { prefix, kind: 'edges', parts }
  })
  if (!connection) return null
  const key = root.alias?.value ?? field
  return { field, root, head: `{"data":{"${key}":`, connection }
}

type Edge = { cursor: string; node: GraphQLValues }

/** Appends one object of the answer to `out` (joined once at the end). */
function write(out: string[], parts: Part[], info: PageInfo, edges: Edge[], edge?: Edge) {
  for (const p of parts) {
    out.push(p.prefix)
    switch (p.kind) {
      case 'literal':
        out.push(p.text)
        break
      case 'value':
        out.push(edge ? (edge.node.values[edge.node.at + p.at] ?? 'null') : 'null')
        break
      case 'claimant':
        // The holder's values are null when no live lease is held: then so is claimedBy.
        if (edge?.node.values[edge.node.at + CLAIM_STATUS_AT] === '"AVAILABLE"') out.push('null')
        else write(out, p.parts, info, edges, edge)
        break
      case 'cursor':
        out.push(`"${edge?.cursor}"`)
        break
      case 'node':
        write(out, p.parts, info, edges, edge)
        break
      case 'info':
        out.push(JSON.stringify(info[p.field]))
        break
      case 'pageInfo':
        write(out, p.parts, info, edges)
        break
      case 'edges':
        out.push('[')
        edges.forEach((e, i) => {
          if (i > 0) out.push(',')
          write(out, p.parts, info, edges, e)
        })
        out.push(']')
        break
    }
  }
  out.push('}')
}

/**
 * Returns the answer's JSON text, or null when the executor must answer. Plans are made once per
 * parsed document (Yoga caches the parse, so a repeated query is the same object).
 */
export function listFastPath() {
  const plans = new WeakMap<DocumentNode, Plan | null>()
  return async (
    schema: GraphQLSchema,
    document: DocumentNode,
    variables: Record<string, unknown> | undefined,
    context: GraphQLContext,
  ): Promise<string | null> => {
    const operation = document.definitions[0]
    if (document.definitions.length !== 1 || operation?.kind !== Kind.OPERATION_DEFINITION)
      return null
    let plan = plans.get(document)
    if (plan === undefined) plans.set(document, (plan = planOf(operation)))
    const definition = plan && schema.getQueryType()?.getFields()[plan.field]
    if (!plan || !definition) return null
    try {
      const coerced = getVariableValues(
        schema,
        operation.variableDefinitions ?? [],
        variables ?? {},
      )
      if (coerced.errors) return null
      const args = getArgumentValues(definition, plan.root, coerced.coerced)
      const { deps, caller } = context
      const page =
        plan.field === 'items'
          ? await listItems(deps, caller, itemsFilter(args as ItemsArgs), AS_GRAPHQL_VALUES)
          : await listInbox(deps, caller, inboxFilter(args as InboxArgs), AS_GRAPHQL_VALUES)
      const { edges, pageInfo } = toConnection(page, args.after as string | null | undefined)
      const out = [plan.head]
      write(out, plan.connection, pageInfo, edges)
      out.push('}}')
      return out.join('')
    } catch {
      // Refused or invalid (a bad cursor, a missing scope): the executor raises the same error
      // in GraphQL's shape, with its path and locations. A read changes nothing, so running it
      // again is safe.
      return null
    }
  }
}
