import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { JWT_SECRET, sessionToken } from './helpers'
import { startServer } from './server'

// A real headless Chromium (Debian's, driven by playwright-core) against a real server process.
// `.ci/run` installs chromium when it is missing; without it these tests are skipped, loudly.
const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium)
  console.warn(
    `browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium, as .ci/run does)`,
  )

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function serverAndBrowser() {
  const dir = mkdtempSync(join(tmpdir(), 'saved-browser-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const server = await startServer({
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/browser.db`,
    JWT_SECRET,
  })
  cleanups.push(async () => {
    server.proc.kill()
    await server.proc.exited
  })
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  cleanups.push(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  // No network but loopback: anything else the pages ask for is refused and recorded.
  const blocked: string[] = []
  await page.route('**', (route) => {
    const url = new URL(route.request().url())
    if (
      url.protocol === 'data:' ||
      url.protocol === 'blob:' ||
      ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
    )
      return route.continue()
    blocked.push(url.href)
    return route.abort('internetdisconnected')
  })
  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(server.base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    })
    return (await res.json()) as any
  }
  return { server, page, blocked, api }
}

/** Screenshots for the README, written only when asked: `npm run screenshots`. */
async function screenshot(page: Page, name: string) {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return
  mkdirSync('docs/screenshots', { recursive: true })
  await page.screenshot({ path: `docs/screenshots/${name}.png` })
}

/** Visible text with the non-breaking spaces editors render collapsed to plain spaces. */
const textOf = (page: Page, selector = 'body') =>
  page
    .locator(selector)
    .first()
    .evaluate((el) => (el as HTMLElement).innerText.replace(/\s+/g, ' '))

describe.skipIf(!hasChromium)('in a real browser, with no network but loopback', () => {
  test('the API reference lists every operation and runs a request through try-it', async () => {
    const { server, page, blocked, api } = await serverAndBrowser()
    const session = await sessionToken('alice')
    await api('POST', '/api/saved/items', session, {
      type: 'event',
      title: 'Dentist on Friday',
      requested_action: 'calendar',
    })
    const spec = (await (await fetch(`${server.base}/openapi/json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>
    }
    const summaries = Object.values(spec.paths).flatMap((ops) =>
      Object.values(ops).map((op) => op.summary),
    )
    expect(summaries.length).toBeGreaterThanOrEqual(14)

    await page.goto(`${server.base}/`)
    expect(new URL(page.url()).pathname).toBe('/openapi')
    await page.waitForFunction(
      (all) => all.every((s) => document.body.innerText.includes(s)),
      summaries,
      { timeout: 20_000 },
    )
    await screenshot(page, 'api-reference')

    // Try-it: the bearer token in the reference's auth box, then the inbox request, sent from the page.
    await page.getByPlaceholder('Token').first().fill(session)
    await page.getByText('The workflow inbox, oldest first').first().click()
    await page.getByRole('button', { name: 'Test Request (get /api/saved/inbox)' }).click()
    await page.getByRole('button', { name: /^Send/ }).first().click()
    await page.waitForFunction(
      () =>
        document.body.innerText.includes('200 OK') &&
        document.body.innerText.includes('Dentist on Friday'),
      undefined,
      { timeout: 15_000 },
    )
    expect(await textOf(page)).toContain('"requested_action": "calendar"')
    await screenshot(page, 'api-reference-try-it')

    expect(blocked).toEqual([])
  }, 60_000)

  test('GraphiQL asks for a token, then runs a query with it and shows the result', async () => {
    const { server, page, blocked, api } = await serverAndBrowser()
    const session = await sessionToken('alice')
    await api('POST', '/api/saved/items', session, {
      type: 'event',
      title: 'Dentist on Friday',
      requested_action: 'calendar',
    })
    const agent = await api('POST', '/api/saved/agent-tokens', session, {
      name: 'browser',
      scopes: ['read_items'],
    })

    const answer = await page.goto(`${server.base}/graphql`)
    expect(answer?.status()).toBe(200)
    expect(await answer?.headerValue('content-encoding')).toBe('br')
    // Nothing has been fetched without a token: the page asks for one first.
    expect(await textOf(page)).toContain(
      'Every GraphQL request needs Authorization: Bearer <token>',
    )
    await page.getByLabel('Bearer token').fill(agent.token)
    await page.getByRole('button', { name: 'Open GraphiQL' }).click()

    await page.locator('.graphiql-execute-button').click()
    await page.waitForFunction(
      () =>
        document
          .querySelector('.graphiql-response')
          ?.textContent?.replace(/\s+/g, ' ')
          .includes('Dentist on Friday'),
      undefined,
      { timeout: 20_000 },
    )
    const result = await textOf(page, '.graphiql-response')
    expect(result).toContain('"requestedAction": "CALENDAR"')
    expect(await textOf(page)).not.toContain('Authentication required')
    // The token is in the headers editor, where the user sees how it is sent.
    expect(await textOf(page, '#hint')).toContain('{"Authorization": "Bearer <token>"}')
    await screenshot(page, 'graphiql')

    expect(blocked).toEqual([])
  }, 60_000)
})
