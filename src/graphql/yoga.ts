import { createYoga, type Plugin } from 'graphql-yoga'
import { GraphQLError, NoSchemaIntrospectionCustomRule, Source, type ValidationRule } from 'graphql'
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
import { rateLimitDraws } from './cost'
/** An operation whose root type the schema lacks (today: any subscription) is a validation error. */
const knownRootOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (!context.getSchema().getRootType(node.operation)) {
      context.reportError(
        new GraphQLError(`This API has no ${node.operation} operations.`, {
          nodes: node,
          extensions: { code: 'BAD_USER_INPUT' },
        }),
      )
    }
  },
})

import { staticAsset, type StaticAsset } from '../http/static-asset'
import type { GraphQLContext } from './builder'

/** GraphQL's spelling of a domain field: the names are the same but for paging. */
const graphqlSpelling = (field: string) => ({ limit: 'first', cursor: 'after' })[field] ?? field

/**
 * One mapping from our coded errors to GraphQL errors; anything else is masked. `at` is the
 * error as graphql-js raised it, whose path and locations say which field failed. Only a
 * request-wide failure (no valid credentials, rate limited) ends the whole response with the
 * REST status; a field refused to this caller is an error on that field.
 */
export function toGraphQLError(
  error: AppError,
  at?: GraphQLError,
  requestWide = false,
): GraphQLError {
  const { message, details } = error.spelled(graphqlSpelling)
  return keepLocations(
    at,
    new GraphQLError(message, {
      nodes: at?.nodes,
      source: at?.source,
      positions: at?.positions,
      path: at?.path,
      extensions: {
        code: ERROR_CODES[error.code].graphql,
        reason: error.code,
        ...(details === undefined ? {} : { details }),
        ...(requestWide
          ? { http: { status: error.status, headers: challengeHeaders(error) ?? error.headers } }
          : {}),
      },
    }),
  )
}

/**
 * graphql-jit reports an error's locations without the AST nodes they came from, and Yoga
 * rebuilds every error from nodes, or source and positions, before sending it. So the
 * locations travel as positions in a stand-in source of the same line and column layout.
 */
function keepLocations(from: GraphQLError | undefined, to: GraphQLError): GraphQLError {
  const locations = from?.locations
  if (to.locations || !locations?.length) return to
  const lines = Math.max(...locations.map((l) => l.line))
  const width = Math.max(...locations.map((l) => l.column))
  const source = new Source(Array.from({ length: lines }, () => ' '.repeat(width)).join('\n'))
  const positions = locations.map((l) => (l.line - 1) * (width + 1) + l.column - 1)
  return new GraphQLError(to.message, {
    source,
    positions,
    path: to.path,
    originalError: to.originalError,
    extensions: to.extensions,
  })
}

export interface GraphQLDeps {
  deps: Deps
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
  /** Allow `__schema` / `__type` (GRAPHQL_INTROSPECTION); the SDL is published in schema/ anyway. */
  introspection?: boolean
}

let graphiql: StaticAsset | undefined

const GRAPHIQL_QUERY =
  '{\n  inbox(first: 10, workflowStatus: PENDING, claimStatus: AVAILABLE) {\n    edges { node { id title requestedAction claimStatus } }\n  }\n}\n'

/**
 * GraphiQL, bundled (no CDN), built on first use, sent compressed with an ETag.
 *
 * Every GraphQL request needs a bearer token, GraphiQL's own schema fetch included, so the page
 * asks for one before GraphiQL starts (kept in sessionStorage, gone with the tab) and puts it in
 * the headers editor, where the user sees how it is sent and can change it.
 */
export async function graphiqlPage(): Promise<StaticAsset> {
  if (!graphiql) {
    const { css, js, favicon, editorWorkerService, jsonWorker, graphqlWorker } = await import(
      '@graphql-yoga/render-graphiql/graphiql'
    )
    const options = {
      title: 'Saved-Items Workflow API',
      endpoint: '/graphql',
      defaultQuery: GRAPHIQL_QUERY,
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    }
    // `<\/script` keeps the inlined bundles from closing the script element early.
    const inline = (value: unknown) => JSON.stringify(value).replaceAll('</', '<\\/')
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>GraphiQL — ${options.title}</title>
<link rel="icon" href="${favicon}">
<style>${css}</style>
<style>
html,body{height:100%;margin:0}
body{display:flex;flex-direction:column;font-family:system-ui,sans-serif}
#root{flex:1;min-height:0}
#hint{padding:.4rem .8rem;font-size:13px;background:#f3f4f6;color:#222;border-bottom:1px solid #ddd}
#hint code{font-size:12px}
#token-form{max-width:42rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}
#token-form input{width:100%;box-sizing:border-box;font:14px monospace;padding:.5rem;margin:.5rem 0}
#token-form button{font-size:14px;padding:.4rem 1rem}
</style>
</head>
<body class="no-focus-outline">
<noscript>You need to enable JavaScript to run GraphiQL.</noscript>
<form id="token-form" hidden>
<h1>GraphiQL</h1>
<p>Every GraphQL request needs <code>Authorization: Bearer &lt;token&gt;</code> — GraphiQL's schema fetch too.
Paste a session JWT (in development: <code>npm run token -- &lt;user-id&gt;</code>) or a personal agent token (<code>sat_…</code>).
It stays in this tab only (sessionStorage) and goes into GraphiQL's <b>Headers</b> editor, where you can change it.</p>
<label for="token">Bearer token</label>
<input id="token" name="token" autocomplete="off" spellcheck="false" placeholder="eyJhbGciOi… or sat_…" required>
<button type="submit">Open GraphiQL</button>
</form>
<div id="hint" hidden>Requests carry the <code>Authorization</code> header from the <b>Headers</b> tab below
(<code>{"Authorization": "Bearer &lt;token&gt;"}</code>). <a href="#" id="change-token">Use another token</a> ·
<a href="/openapi">REST reference</a></div>
<div id="root"></div>
<script>
function prepareBlob(workerContent) {
  return URL.createObjectURL(new Blob([workerContent], { type: 'application/javascript' }));
}
const workers = {
  editorWorkerService: prepareBlob(${inline(editorWorkerService)}),
  json: prepareBlob(${inline(jsonWorker)}),
  graphql: prepareBlob(${inline(graphqlWorker)}),
};
self['MonacoEnvironment'] = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return workers[label]; } };
${js};
(function () {
  const KEY = 'saved-items-graphiql-token';
  const options = ${inline(options)};
  const form = document.getElementById('token-form');
  function start(token) {
    form.hidden = true;
    document.getElementById('hint').hidden = false;
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'),
      Object.assign({}, options, { headers: JSON.stringify({ Authorization: 'Bearer ' + token }, null, 2) }));
  }
  document.getElementById('change-token').addEventListener('click', function (event) {
    event.preventDefault();
    sessionStorage.removeItem(KEY);
    location.reload();
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    const token = document.getElementById('token').value.trim().replace(/^Bearers+/i, '');
    if (!token) return;
    sessionStorage.setItem(KEY, token);
    start(token);
  });
  const saved = sessionStorage.getItem(KEY);
  if (saved) start(saved);
  else form.hidden = false;
})();
</script>
</body>
</html>
`
    graphiql = staticAsset(html, 'text/html; charset=utf-8', 'no-cache')
  }
  return graphiql
}

/** Yoga with our schema, the caller in the context, bounded queries and GraphiQL inlined. */
export function createGraphQL({ deps, resolveCaller, rateLimit, introspection }: GraphQLDeps) {
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
        const caller =
          authenticated ??
          (await resolveCaller(request.headers.get('authorization'), clientAddress))
        // All draws up front, all-or-nothing: a request over budget applies none of its mutations.
        await rateLimit(caller, rateLimitDraws(params))
        return contextFor(request, caller)
      } catch (error) {
        throw error instanceof AppError ? toGraphQLError(error, undefined, true) : error
      }
    },
    maskedErrors: {
      maskError(error, message) {
        const original = error instanceof GraphQLError ? error.originalError : error
        if (original instanceof AppError)
          return toGraphQLError(original, error instanceof GraphQLError ? error : undefined)
        if (error instanceof GraphQLError && !error.originalError) return error
        deps.logger.error('unhandled graphql error', {
          error:
            original instanceof Error ? `${original.name}: ${original.message}` : String(original),
        })
        const at = error instanceof GraphQLError ? error : undefined
        return keepLocations(
          at,
          new GraphQLError(message, {
            nodes: at?.nodes,
            source: at?.source,
            positions: at?.positions,
            path: at?.path,
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          }),
        )
      },
    },
    plugins: [
      // graphql-js 16 lets `subscription { … }` through validation on a schema without that root
      // type, and the executor then crashes (a masked 500 and a stack in the log).
      {
        onValidate: ({ addValidationRule }) => {
          addValidationRule(knownRootOperationTypes)
          if (introspection === false) addValidationRule(NoSchemaIntrospectionCustomRule)
        },
      } as Plugin,
      // Compiles each validated document once into a specialised executor (measured in bench/).
      // Not for subscriptions: its compiled subscribe hands the resolver the variables as arguments.
      useGraphQlJit(
        {},
        {
          enableIf: ({ document }) =>
            !document.definitions.some(
              (d) => d.kind === 'OperationDefinition' && d.operation === 'subscription',
            ),
        },
      ) as Plugin,
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
