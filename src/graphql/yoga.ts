import { createYoga, type Plugin } from 'graphql-yoga'
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql'
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor'
import { useGraphQlJit } from '@envelop/graphql-jit'
import DataLoader from 'dataloader'
import { AppError, ERROR_CODES } from '../errors'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import type { Caller } from '../domain/caller'
import { imageLinks, type ItemDeps } from '../domain/items'
import { itemHistories } from '../domain/workflow'
import type { Logger } from '../logger'
import { graphqlSchema } from './schema'
import { rateLimitDraws } from './cost'
import type { GraphQLContext } from './builder'

/** An operation whose root type the schema lacks (today: any subscription) is a validation error. */
const knownRootOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (!context.getSchema().getRootType(node.operation)) {
      context.reportError(new GraphQLError(`This API has no ${node.operation} operations.`, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }))
    }
  },
})

/** One mapping from our coded errors to GraphQL errors; anything else is masked. */
export function toGraphQLError(error: AppError): GraphQLError {
  const headers = error.headers
  return new GraphQLError(error.message, {
    extensions: {
      code: ERROR_CODES[error.code].graphql,
      reason: error.code,
      ...(error.details === undefined ? {} : { details: error.details }),
      // Authentication failures end the whole request with the REST status and challenge.
      ...(error.code === 'unauthorized' || error.code === 'session_required' || error.code === 'rate_limited'
        ? { http: { status: error.status, headers } }
        : {}),
    },
  })
}

export interface GraphQLDeps extends ItemDeps {
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
  maxUploadBytes: number
  publicUrl?: string
  logger: Logger
  /** Allow `__schema` / `__type` (GRAPHQL_INTROSPECTION); the SDL is published in schema/ anyway. */
  introspection?: boolean
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
export function createGraphQL(deps: GraphQLDeps) {
  const contextFor = async (request: Request, caller: Caller): Promise<GraphQLContext> => ({
    caller,
    deps,
    baseUrl: deps.publicUrl ?? new URL(request.url).origin,
    loaders: {
      history: new DataLoader(async (ids) => {
        const byItem = await itemHistories(deps.db, caller, ids)
        return ids.map((id) => byItem.get(id) ?? [])
      }),
      imageUrl: new DataLoader(async (ids) => {
        const links = await imageLinks(deps, caller, ids, deps.publicUrl ?? new URL(request.url).origin)
        return ids.map((id) => links.get(id) ?? null)
      }),
    },
  })

  // The HTTP layer (src/graphql/http.ts) authenticates before reading the body and hands the
  // caller over; `clientAddress` is for the failed-authentication limit.
  return createYoga<{ clientAddress?: string; caller?: Caller }>({
    schema: graphqlSchema(),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the app's (CORS_ORIGINS); Yoga's own would answer every origin.
    cors: false,
    // GraphiQL is served by `graphiqlPage` so its multi-megabyte bundle loads only when asked for.
    graphiql: false,
    logging: false,
    context: async ({ request, params, clientAddress, caller: authenticated }) => {
      try {
        const caller = authenticated ?? (await deps.resolveCaller(request.headers.get('authorization'), clientAddress))
        // All draws up front, all-or-nothing: a request over budget applies none of its mutations.
        await deps.rateLimit(caller, rateLimitDraws(params))
        return contextFor(request, caller)
      } catch (error) {
        throw error instanceof AppError ? toGraphQLError(error) : error
      }
    },
    maskedErrors: {
      maskError(error, message) {
        const original = error instanceof GraphQLError ? error.originalError : error
        if (original instanceof AppError) return toGraphQLError(original)
        if (error instanceof GraphQLError && !error.originalError) return error
        deps.logger.error('unhandled graphql error', { error: original instanceof Error ? `${original.name}: ${original.message}` : String(original) })
        return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } })
      },
    },
    plugins: [
      // graphql-js 16 lets `subscription { … }` through validation on a schema without that root
      // type, and the executor then crashes (a masked 500 and a stack in the log).
      {
        onValidate: ({ addValidationRule }) => {
          addValidationRule(knownRootOperationTypes)
          if (deps.introspection === false) addValidationRule(NoSchemaIntrospectionCustomRule)
        },
      } as Plugin,
      // Compiles each validated document once into a specialised executor (measured in bench/).
      useGraphQlJit() as Plugin,
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
