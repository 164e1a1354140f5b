import { GraphQLError, Kind, type DocumentNode } from 'graphql'
import { processRegularResult, type YogaServerInstance } from 'graphql-yoga'
import { AppError, ERROR_CODES } from '../errors'
import type { CallerResolver } from '../auth/caller'
import { readBody } from '../http/body'
import type { GraphQLContext } from './builder'
import { listFastPath } from './list-fast-path'

type Yoga = YogaServerInstance<Record<string, unknown>, Record<string, unknown>>

const PLAIN_JSON_ACCEPT = /^(\*\/\*|application\/json(;\s*charset=utf-8)?)$/i

/** A refusal before GraphQL runs, in GraphQL's shape: `{ errors: [{ message, extensions: { code, reason } }] }`. */
export function graphqlRefusal(error: AppError): Response {
  const body = {
    errors: [
      {
        message: error.message,
        extensions: { code: ERROR_CODES[error.code].graphql, reason: error.code },
      },
    ],
  }
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...error.headers },
  })
}

export interface GraphQLHttpOptions {
  resolveCaller: CallerResolver
  maxBodyBytes: number
  bodyTimeoutMs: number
}

/**
 * The HTTP side of /graphql. The common request — a POST of one JSON operation by an agent or a
 * front end — runs through Yoga's own envelop (the same parser and validation caches,
 * graphql-armor rules, context factory, graphql-jit executor and error masking) and Yoga's own
 * result processor, skipping only its generic request/response adapter, which cost a third of
 * a 50-item page (bench/). Anything else — GET, batches, other Accept headers, documents that
 * fail to parse or validate, several operations — is handed to `yoga.fetch` unchanged, so every
 * edge keeps Yoga's behaviour.
 *
 * Before either path, the caller is authenticated from the header (401/429 without reading a
 * byte of the body), a POST must be `application/json` (415: the CORS-safelisted types —
 * urlencoded, multipart, text/plain — would let any web page send mutations), and the body is
 * read under the JSON size limit and deadline (413/408), chunked or not.
 */
export function graphqlHandler(yoga: Yoga, options: GraphQLHttpOptions) {
  const fastList = listFastPath()
  return async (request: Request, clientAddress?: string): Promise<Response> => {
    let caller: unknown
    let text: string | undefined
    try {
      caller = await options.resolveCaller(
        request.headers.get('authorization'),
        clientAddress,
        request,
      )
      if (request.method === 'POST') {
        const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase()
        if (type !== 'application/json') {
          throw new AppError('unsupported_media_type', 'Send GraphQL requests as application/json.')
        }
        text = new TextDecoder().decode(
          await readBody(request, options.maxBodyBytes, options.bodyTimeoutMs),
        )
      }
    } catch (error) {
      if (error instanceof AppError) return graphqlRefusal(error)
      throw error
    }
    // The caller and the client's address ride in Yoga's server context (src/graphql/yoga.ts).
    const serverContext = { clientAddress, caller }
    const viaYoga = (request: Request, body?: string) =>
      yoga.fetch(
        body === undefined
          ? request
          : new Request(request.url, { method: request.method, headers: request.headers, body }),
        serverContext,
      )
    if (text === undefined) return viaYoga(request)

    const accept = request.headers.get('accept')
    if (accept !== null && !PLAIN_JSON_ACCEPT.test(accept.trim())) return viaYoga(request, text)
    let params: {
      query?: unknown
      variables?: unknown
      operationName?: unknown
      extensions?: unknown
    }
    try {
      params = JSON.parse(text)
    } catch {
      return viaYoga(request, text)
    }
    const { query, variables, operationName } = params ?? {}
    if (
      typeof params !== 'object' ||
      params === null ||
      Array.isArray(params) ||
      typeof query !== 'string' ||
      (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) ||
      (operationName != null && typeof operationName !== 'string') ||
      params.extensions != null
    ) {
      return viaYoga(request, text)
    }

    const { parse, validate, contextFactory, execute, schema } = yoga.getEnveloped({
      request,
      params,
      ...serverContext,
    } as never)
    let document: DocumentNode
    try {
      document = parse(query)
    } catch {
      return viaYoga(request, text)
    }
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
    const operation = operations[0]
    if (
      operations.length !== 1 ||
      operation?.kind !== Kind.OPERATION_DEFINITION ||
      operation.operation === 'subscription'
    ) {
      return viaYoga(request, text)
    }
    if (operationName != null && operation.name?.value !== operationName)
      return viaYoga(request, text)
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
        return processRegularResult(
          { errors: [error] } as never,
          { Response } as never,
          'application/json',
        ) as Response
      }
      return viaYoga(request, text)
    }
    const rendered = await fastList(
      schema,
      document,
      (variables ?? undefined) as Record<string, unknown> | undefined,
      contextValue as GraphQLContext,
    )
    if (rendered !== null) {
      // What processRegularResult sends for an answer without errors.
      return new Response(rendered, {
        status: 200,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
      })
    }
    const result = await execute({
      schema,
      document,
      contextValue,
      variableValues: (variables ?? undefined) as never,
      operationName: operationName as string | undefined,
    })
    return processRegularResult(
      result as never,
      { Response } as never,
      'application/json',
    ) as Response
  }
}
