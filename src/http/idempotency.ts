import { type Caller, claimantOf } from '../domain/caller'
import type { Deps } from '../domain/deps'
import {
  completeIdempotencyKey,
  isIdempotencyKey,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
} from '../domain/idempotency'
import { AppError, invalid } from '../errors'
import { readBody } from './body'
import { appErrorResponse } from './errors'

const WRITES = new Set(['POST', 'PATCH', 'DELETE'])
/** Answer headers worth replaying; the rest (request id, rate limits) describe the new request. */
const REPLAYED_HEADERS = ['content-type', 'location', 'cache-control']

/**
 * `Idempotency-Key` on every POST, PATCH and DELETE under /api/saved/ (CONTRACT 7). It wraps
 * the whole app, because a replay is the first HTTP answer byte for byte: the same status and
 * body, plus `Idempotent-Replayed: true`, and nothing runs again.
 */
export function withIdempotency(
  deps: Deps,
  /** Authenticates the request's caller (failed attempts count against its client address). */
  resolveCaller: (authorization: string | null, request: Request) => Promise<Caller>,
  /** The largest body any write route takes, and how long it may take to arrive. */
  body: { maxBytes: number; timeoutMs: number },
  handle: (request: Request) => Promise<Response>,
) {
  return async (request: Request): Promise<Response> => {
    const key = request.headers.get('idempotency-key')
    if (key === null || !WRITES.has(request.method)) return handle(request)
    const url = URL.parse(request.url)
    // A URL we cannot read (a malformed Host) is the app's to refuse, not ours.
    if (!url?.pathname.startsWith('/api/saved/')) return handle(request)
    if (!isIdempotencyKey(key)) {
      return appErrorResponse(
        invalid('Idempotency-Key must be 1 to 255 printable ASCII characters.', {
          field: 'Idempotency-Key',
        }),
      )
    }
    if (
      request.method === 'POST' &&
      url.pathname.replace(/\/+$/, '') === '/api/saved/agent-tokens'
    ) {
      return appErrorResponse(
        invalid(
          'Token creation cannot be replayed (its answer holds a secret that is never stored); send it without Idempotency-Key.',
          { field: 'Idempotency-Key' },
        ),
      )
    }
    let owner: string
    try {
      const me = claimantOf(await resolveCaller(request.headers.get('authorization'), request))
      owner = `${me.kind}:${me.id}`
    } catch (error) {
      // Refused here is refused: never run a keyed request without its reservation.
      if (error instanceof AppError) return appErrorResponse(error)
      throw error
    }
    let bytes: Uint8Array
    try {
      bytes = await readBody(request, body.maxBytes, body.timeoutMs)
    } catch (error) {
      if (error instanceof AppError) return appErrorResponse(error)
      throw error
    }
    const hash = new Bun.CryptoHasher('sha256')
      .update(`${request.method} ${url.pathname}${url.search}\n`)
      .update(bytes)
      .digest('hex')
    let reservation: Awaited<ReturnType<typeof reserveIdempotencyKey>>
    try {
      reservation = await reserveIdempotencyKey(deps, owner, key, hash)
    } catch (error) {
      if (error instanceof AppError) return appErrorResponse(error)
      throw error
    }
    if (reservation.kind === 'replay') {
      const { status, headers, body: stored } = reservation.answer
      return new Response(status === 204 ? null : stored, {
        status,
        headers: { ...headers, 'idempotent-replayed': 'true' },
      })
    }
    let response: Response
    try {
      response = await handle(
        new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: bytes as Uint8Array<ArrayBuffer>,
          signal: request.signal,
        }),
      )
    } catch (error) {
      await releaseIdempotencyKey(deps, owner, key)
      throw error
    }
    // Failures on our side, and rate limiting, are not answers worth keeping: a retry runs again.
    if (response.status >= 500 || response.status === 429) {
      await releaseIdempotencyKey(deps, owner, key)
      return response
    }
    const text = await response.text()
    const headers: Record<string, string> = {}
    for (const name of REPLAYED_HEADERS) {
      const value = response.headers.get(name)
      if (value !== null) headers[name] = value
    }
    await completeIdempotencyKey(deps, owner, key, { status: response.status, headers, body: text })
    return new Response(response.status === 204 ? null : text, {
      status: response.status,
      headers: response.headers,
    })
  }
}
