import { AppError } from '../errors'

const tooLarge = (limit: number) => new AppError('payload_too_large', `Request bodies here are limited to ${limit} bytes.`)

/**
 * Reads a request body as bytes, refusing it as soon as it passes `limit` bytes — announced by
 * Content-Length or not (chunked) — so an oversized body is never buffered whole. A body that
 * trickles in for longer than `timeoutMs` altogether is refused too: Bun's idle timeout closes
 * only connections that go silent, not ones that send a byte now and then.
 */
export async function readBody(request: Request, limit: number, timeoutMs: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('request_timeout', `The request body did not arrive within ${Math.round(timeoutMs / 1000)} s.`)), timeoutMs)
  })
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline])
      if (done) break
      size += value.byteLength
      if (size > limit) throw tooLarge(limit)
      chunks.push(value)
    }
  } catch (error) {
    void reader.cancel().catch(() => {})
    throw error
  } finally {
    clearTimeout(timer)
  }
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}
