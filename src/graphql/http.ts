import { GraphQLError, Kind, type DocumentNode } from 'graphql'
import { processRegularResult, type YogaServerInstance } from 'graphql-yoga'

type Yoga = YogaServerInstance<Record<string, unknown>, Record<string, unknown>>

const PLAIN_JSON_ACCEPT = /^(\*\/\*|application\/json(;\s*charset=utf-8)?)$/i

/**
 * The HTTP side of /graphql. The common request — a POST of one JSON operation by an agent or a
 * front end — runs through Yoga's own envelop (the same parser and validation caches,
 * graphql-armor rules, context factory, graphql-jit executor and error masking) and Yoga's own
 * result processor, skipping only its generic request/response adapter, which cost a third of
 * a 50-item page (bench/). Anything else — GET, GraphiQL, batches, other content types or
 * Accept headers, documents that fail to parse or validate, several operations, a context that
 * refuses the caller — is handed to `yoga.fetch` unchanged, so every edge keeps Yoga's behaviour.
 */
export function graphqlHandler(yoga: Yoga) {
  return async (request: Request, clientAddress?: string): Promise<Response> => {
    // The client's address rides in Yoga's server context, for the failed-authentication limit.
    const viaYoga = (request: Request, body?: string) =>
      yoga.fetch(body === undefined ? request : new Request(request.url, { method: request.method, headers: request.headers, body }), { clientAddress })

    const accept = request.headers.get('accept')
    if (
      request.method !== 'POST' ||
      !(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json') ||
      (accept !== null && !PLAIN_JSON_ACCEPT.test(accept.trim()))
    ) {
      return viaYoga(request)
    }
    const text = await request.text()
    let params: { query?: unknown; variables?: unknown; operationName?: unknown; extensions?: unknown }
    try {
      params = JSON.parse(text)
    } catch {
      return viaYoga(request, text)
    }
    const { query, variables, operationName } = params ?? {}
    if (
      typeof params !== 'object' || params === null || Array.isArray(params) ||
      typeof query !== 'string' ||
      (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) ||
      (operationName != null && typeof operationName !== 'string') ||
      params.extensions != null
    ) {
      return viaYoga(request, text)
    }

    const { parse, validate, contextFactory, execute, schema } = yoga.getEnveloped({ request, params, clientAddress } as never)
    let document: DocumentNode
    try {
      document = parse(query)
    } catch {
      return viaYoga(request, text)
    }
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
    const operation = operations[0]
    if (operations.length !== 1 || operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation === 'subscription') {
      return viaYoga(request, text)
    }
    if (operationName != null && operation.name?.value !== operationName) return viaYoga(request, text)
    try {
      // graphql-armor's limits throw from here rather than returning errors.
      if (validate(schema, document).length > 0) return viaYoga(request, text)
    } catch {
      return viaYoga(request, text)
    }

    let contextValue: unknown
    try {
      contextValue = await contextFactory()
    } catch (error) {
      // Authentication, rate limit: answered here with the status and challenge they carry, as
      // Yoga would; running the context again through Yoga would count a failure or draw twice.
      if (error instanceof GraphQLError && error.extensions.http) {
        return processRegularResult({ errors: [error] } as never, { Response } as never, 'application/json') as Response
      }
      return viaYoga(request, text)
    }
    const result = await execute({ schema, document, contextValue, variableValues: (variables ?? undefined) as never, operationName: operationName as string | undefined })
    return processRegularResult(result as never, { Response } as never, 'application/json') as Response
  }
}
