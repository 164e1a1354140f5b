import { Elysia } from 'elysia'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AppError } from '../errors'
import { API_INFO, type Spec } from './docs'
import { staticAsset, type StaticAsset } from './static-asset'

/** The Scalar API reference bundle shipped in the npm package (pinned in package.json), and its version. */
function scalarBundle(): { version: string; script: Uint8Array } {
  // The package exports no path to its browser build; find it beside its main entry.
  const dist = dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference')))
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as {
    version: string
  }
  return { version, script: readFileSync(join(dist, 'browser', 'standalone.js')) }
}

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  )

/**
 * Everything the page needs comes from this server: no CDN, no web fonts, no telemetry, no
 * request proxy (try-it calls this same origin), so the reference works with no network.
 */
export function referencePage(scriptPath: string, spec: Spec): string {
  // Without JavaScript (a terminal browser, a crawler) the page still lists every operation.
  const rows = Object.entries(spec.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(
      ([method, op]) =>
        `<tr><td><code>${esc(method.toUpperCase())}</code></td><td><code>${esc(path)}</code></td><td>${esc(String(op.summary ?? ''))}</td></tr>`,
    ),
  )
  const config = {
    url: '/openapi/json',
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: '',
    hideClientButton: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    authentication: { preferredSecurityScheme: 'bearerAuth' },
    defaultOpenAllTags: true,
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(API_INFO.title)} — API reference</title>
<style>body{margin:0;font-family:system-ui,sans-serif}#loading{padding:2rem}</style>
</head>
<body>
<p id="loading">Loading the API reference… The machine-readable document is at <a href="/openapi/json">/openapi/json</a>;
GraphQL is at <a href="/graphql">/graphql</a>.</p>
<noscript><table><thead><tr><th>Method</th><th>Path</th><th>Operation</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></noscript>
<div id="app"></div>
<script src="${esc(scriptPath)}"></script>
<script>
document.getElementById('loading').remove();
Scalar.createApiReference('#app', ${JSON.stringify(config)});
</script>
</body>
</html>
`
}

/**
 * `GET /openapi` (the interactive reference), `GET /openapi/json` (the document), the
 * reference's script, and `GET /` leading a person to the reference. `spec` builds the
 * document on first use, once every route is registered.
 */
export function referenceRoutes(spec: () => Spec) {
  let assets:
    | { page: StaticAsset; script: StaticAsset; document: StaticAsset; scriptPath: string }
    | undefined
  const load = () => {
    if (!assets) {
      const { version, script } = scalarBundle()
      const document = spec()
      // The version is in the path, so the script can be cached for good.
      const scriptPath = `/openapi/scalar-${version}.js`
      assets = {
        scriptPath,
        script: staticAsset(
          script,
          'text/javascript; charset=utf-8',
          'public, max-age=31536000, immutable',
        ),
        page: staticAsset(
          referencePage(scriptPath, document),
          'text/html; charset=utf-8',
          'no-cache',
        ),
        document: staticAsset(
          JSON.stringify(document),
          'application/json; charset=utf-8',
          'no-cache',
        ),
      }
    }
    return assets
  }
  return new Elysia()
    .get('/', ({ redirect }) => redirect('/openapi', 302), { detail: { hide: true } })
    .get('/openapi', ({ request }) => load().page.respond(request), { detail: { hide: true } })
    .get('/openapi/json', ({ request }) => load().document.respond(request), {
      detail: { hide: true },
    })
    .get(
      '/openapi/:script',
      ({ request, params }) => {
        const { script, scriptPath } = load()
        if (`/openapi/${params.script}` !== scriptPath)
          throw new AppError('not_found', 'No such route.')
        return script.respond(request)
      },
      { detail: { hide: true } },
    )
}
