import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'
import { setup, sessionToken } from './helpers'

// A real S3-protocol server, in-process: the S3 image store is tested against the protocol, not a mock.
let server: any
let endpoint: string
const dir = mkdtempSync(join(tmpdir(), 'saved-s3-'))

beforeAll(async () => {
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: 'saved-images' }],
  })
  const { port } = await server.run()
  endpoint = `http://127.0.0.1:${port}`
})
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

const PNG = Uint8Array.from(
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
)

describe('images in an S3-compatible bucket', () => {
  test('upload lands in the bucket; the presigned link returns the same bytes; it expires after 15 minutes', async () => {
    const ctx = await setup({
      S3_BUCKET: 'saved-images',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    })
    const session = await sessionToken('alice')
    const form = new FormData()
    form.append('type', 'reference')
    form.append('image', new File([PNG as Uint8Array<ArrayBuffer>], 'x.png', { type: 'image/png' }))
    const created = await ctx.json('POST', '/api/saved/items', { token: session, body: form })
    expect(created.status).toBe(201)
    const url = new URL(created.body.source_image_url)
    expect(url.origin).toBe(endpoint)
    expect(url.searchParams.get('X-Amz-Signature')).toBeTruthy()
    const image = await fetch(url)
    expect(image.status).toBe(200)
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG)
    // The link expires with the configured lifetime (the bucket enforces it; s3rver does not check signatures).
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900')
    // No local file route exists when images live in S3.
    expect((await ctx.request('GET', '/files/images/anything')).status).toBe(404)
  })
})
