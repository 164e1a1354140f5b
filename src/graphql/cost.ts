import {
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql'

/** Root fields counted at most; graphql-armor's alias and token limits keep real documents far below. */
const MAX_COUNTED = 1000

function rootFields(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  seen: Set<string>,
): number {
  let count = 0
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) count++
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      count += rootFields(selection.selectionSet, fragments, seen)
    else {
      const name = selection.name.value
      const fragment = fragments.get(name)
      if (!fragment || seen.has(name)) continue
      seen.add(name)
      count += rootFields(fragment.selectionSet, fragments, seen)
    }
    if (count >= MAX_COUNTED) return MAX_COUNTED
  }
  return count
}

/**
 * How many rate-limit tokens a GraphQL request draws: one per root field of a mutation (aliases
 * and fragments included, so `a: createItem … b: createItem …` is two operations), one for
 * anything else. Fields skipped by @skip/@include still count: the cost is known before execution.
 */
export function rateLimitDraws(
  params: { query?: unknown; operationName?: unknown } | undefined,
): number {
  const query = params?.query
  // Most requests are queries: no second parse for them.
  if (typeof query !== 'string' || !query.includes('mutation')) return 1
  let document: DocumentNode
  try {
    document = parse(query, { noLocation: true, maxTokens: 10_000 })
  } catch {
    return 1
  }
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
  const operation =
    typeof params?.operationName === 'string'
      ? operations.find((o) => o.name?.value === params.operationName)
      : operations.length === 1
        ? operations[0]
        : undefined
  if (operation?.operation !== 'mutation') return 1
  return Math.max(1, rootFields(operation.selectionSet, fragments, new Set()))
}
