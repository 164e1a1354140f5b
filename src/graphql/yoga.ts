import { createYoga, type Plugin } from 'graphql-yoga'
import { GraphQLError } from 'graphql'
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor'
import { useGraphQlJit } from '@envelop/graphql-jit'
import DataLoader from 'dataloader'
import { AppError, ERROR_CODES, challengeHeaders } from '../errors'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import type { Caller } from '../domain/caller'
import type { Deps } from '../domain/deps'
import { imageLinks } from '../domain/items'
import { itemHistories } from '../domain/workflow'
import { graphqlSchema } from './schema'
import type { GraphQLContext } from './builder'

/** GraphQL's spelling of a domain field: the names are the same but for paging. */
const graphqlSpelling = (field: string) => ({ limit: 'first', cursor: 'after' })[field] ?? field

/**
 * One mapping from our coded errors to GraphQL errors; anything else is masked. `at` is the
 * error as graphql-js raised it, whose path and locations say which field failed. Only a
 * request-wide failure (no valid credentials, rate limited) ends the whole response with the
 * REST status; a field refused to this caller is an error on that field.
 */
export function toGraphQLError(error: AppError, at?: GraphQLError, requestWide = false): GraphQLError {
  const { message, details } = error.spelled(graphqlSpelling)
  return new GraphQLError(message, {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    extensions: {
      code: ERROR_CODES[error.code].graphql,
      reason: error.code,
      ...(details === undefined ? {} : { details }),
      ...(requestWide ? { http: { status: error.status, headers: challengeHeaders(error) ?? error.headers } } : {}),
    },
  })
}

export interface GraphQLDeps {
  deps: Deps
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
}

let graphiql: string | undefined

/** GraphiQL, bundled (no CDN), loaded and rendered on first use. */
export async function graphiqlPage(): Promise<string> {
  if (!graphiql) {
    const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql')
    graphiql = renderGraphiQL({
      title: 'Saved-Items Workflow API',
      endpoint: '/graphql',
      defaultQuery: '{\n  inbox(first: 10, workflowStatus: PENDING, claimStatus: AVAILABLE) {\n    edges { node { id title requestedAction claimStatus } }\n  }\n}\n',
    })
  }
  return graphiql
}

/** Yoga with our schema, the caller in the context, bounded queries and GraphiQL inlined. */
export function createGraphQL({ deps, resolveCaller, rateLimit }: GraphQLDeps) {
  const contextFor = async (request: Request, caller: Caller): Promise<GraphQLContext> => ({
    caller,
    deps,
    signal: request.signal,
    loaders: {
      history: new DataLoader(async (ids) => {
        const byItem = await itemHistories(deps, caller, ids)
        return ids.map((id) => byItem.get(id) ?? [])
      }),
      imageUrl: new DataLoader(async (ids) => {
        const links = await imageLinks(deps, caller, ids)
        return ids.map((id) => links.get(id) ?? null)
      }),
    },
  })

  return createYoga<{ caller?: Caller }>({
    schema: graphqlSchema(),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the app's (CORS_ORIGINS); Yoga's own would answer every origin.
    cors: false,
    // GraphiQL is served by `graphiqlPage` so its multi-megabyte bundle loads only when asked for.
    graphiql: false,
    logging: false,
    context: async ({ request }) => {
      try {
        const caller = await resolveCaller(request.headers.get('authorization'))
        await rateLimit(caller)
        return contextFor(request, caller)
      } catch (error) {
        throw error instanceof AppError ? toGraphQLError(error, undefined, true) : error
      }
    },
    maskedErrors: {
      maskError(error, message) {
        const original = error instanceof GraphQLError ? error.originalError : error
        if (original instanceof AppError) return toGraphQLError(original, error instanceof GraphQLError ? error : undefined)
        if (error instanceof GraphQLError && !error.originalError) return error
        deps.logger.error('unhandled graphql error', { error: original instanceof Error ? `${original.name}: ${original.message}` : String(original) })
        const at = error instanceof GraphQLError ? error : undefined
        return new GraphQLError(message, {
          nodes: at?.nodes, source: at?.source, positions: at?.positions, path: at?.path,
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        })
      },
    },
    plugins: [
      // Compiles each validated document once into a specialised executor (measured in bench/).
      // Not for subscriptions: its compiled subscribe hands the resolver the variables as arguments.
      useGraphQlJit({}, { enableIf: ({ document }) => !document.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation === 'subscription') }) as Plugin,
      EnvelopArmorPlugin({
        maxDepth: { n: 10 },
        maxAliases: { n: 15 },
        maxTokens: { n: 2000 },
        maxDirectives: { n: 20 },
        costLimit: { maxCost: 20_000 },
        blockFieldSuggestion: { enabled: true },
      }) as Plugin,
    ],
  })
}
