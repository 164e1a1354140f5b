import { rm, writeFile } from 'node:fs/promises'
import { makePrivateDirAsync, PRIVATE_FILE_MODE } from '../private-files'
import { join } from 'node:path'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Config } from '../config'

/**
 * Where item images live. The local store keeps files under the data directory and hands out
 * app-served URLs signed with an HMAC; the S3 store hands out presigned GETs from the bucket.
 */
export interface ImageStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>
  /** A URL that works without a bearer token until `ttlSeconds` pass. */
  signedUrl(key: string, contentType: string, now: number): string
  delete(key: string): Promise<void>
}

/** The image formats accepted, recognised by their first bytes, never by a file name. */
export function sniffImageType(bytes: Uint8Array): string | null {
  const b = bytes
  if (
    b.length >= 8 &&
    b[0] === 0x89 &&
    b[1] === 0x50 &&
    b[2] === 0x4e &&
    b[3] === 0x47 &&
    b[4] === 0x0d &&
    b[5] === 0x0a &&
    b[6] === 0x1a &&
    b[7] === 0x0a
  )
    return 'image/png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to))
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'image/gif'
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  return null
}

/** Signs `<key>.<expires>`; the route checks it in constant time. */
export class UrlSigner {
  constructor(
    private readonly key: Uint8Array,
    readonly ttlSeconds: number,
  ) {}

  sign(key: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${key}.${expires}`).digest('base64url')
  }

  verify(
    key: string,
    expires: string,
    signature: string,
    now = Date.now(),
  ): 'ok' | 'expired' | 'bad' {
    if (!/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'bad'
    const expected = Buffer.from(this.sign(key, Number(expires)))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'bad'
    return Number(expires) * 1000 <= now ? 'expired' : 'ok'
  }
}

export class LocalImageStore implements ImageStore {
  readonly dir: string
  constructor(
    dataDir: string,
    readonly signer: UrlSigner,
    /** The origin this app is reached at, for the links it signs (PUBLIC_URL). */
    private readonly publicUrl: string,
  ) {
    this.dir = join(dataDir, 'images')
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    // Owner-only (0700 / 0600), like the database: images are the users' private data.
    await makePrivateDirAsync(this.dir)
    await writeFile(join(this.dir, key), bytes, { mode: PRIVATE_FILE_MODE })
  }

  path(key: string): string {
    return join(this.dir, key)
  }

  async delete(key: string): Promise<void> {
    await rm(join(this.dir, key), { force: true })
  }

  signedUrl(key: string, _contentType: string, now: number): string {
    const expires = Math.floor(now / 1000) + this.signer.ttlSeconds
    return `${this.publicUrl}/files/images/${key}?expires=${expires}&signature=${this.signer.sign(key, expires)}`
  }
}

export class S3ImageStore implements ImageStore {
  private readonly client: Bun.S3Client
  constructor(
    s3: NonNullable<Config['s3']>,
    private readonly ttlSeconds: number,
  ) {
    this.client = new Bun.S3Client({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: s3.region,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    })
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await this.client.write(`images/${key}`, bytes, { type: contentType })
  }

  async delete(key: string): Promise<void> {
    await this.client.delete(`images/${key}`)
  }

  signedUrl(key: string, contentType: string): string {
    return this.client.presign(`images/${key}`, {
      method: 'GET',
      expiresIn: this.ttlSeconds,
      type: contentType,
    })
  }
}

export function createImageStore(config: Config): ImageStore {
  const signer = new UrlSigner(config.urlSigningKey, config.signedUrlTtlSeconds)
  return config.s3
    ? new S3ImageStore(config.s3, config.signedUrlTtlSeconds)
    : new LocalImageStore(
        config.dataDir,
        signer,
        config.publicUrl ?? `http://localhost:${config.port}`,
      )
}
