import type { TSchema, Static } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { AppError, invalid } from '../errors'

const tooLarge = (limit: number) =>
  new AppError('payload_too_large', `Request bodies here are limited to ${limit} bytes.`)

/**
 * Reads a request body as bytes, refusing it as soon as it passes `limit` bytes — announced by
 * Content-Length or not (chunked) — so an oversized body is never buffered whole. A body that
 * trickles in for longer than `timeoutMs` altogether is refused too: Bun's idle timeout closes
 * only connections that go silent, not ones that send a byte now and then.
 */
export async function readBody(
  request: Request,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError(
            'request_timeout',
            `The request body did not arrive within ${Math.round(timeoutMs / 1000)} s.`,
          ),
        ),
      timeoutMs,
    )
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
  if (chunks.length === 1 && chunks[0]) return chunks[0]
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

/**
 * Checks a JSON body against its model, strictly: no coercion ("60" is not a number), no
 * unknown properties. Only the shape is checked here; the domain checks what values mean. The
 * error names the property from TypeBox's structured error, so every environment says the same.
 */
export function checkBody<S extends TSchema>(schema: S, value: unknown): Static<S> {
  let check = compiled.get(schema)
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)))
  if (check.Check(value)) return value as Static<S>
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('The body must be a JSON object.')
  const unknown = unknownProperty(schema, value)
  if (unknown) throw invalid(`Unknown property "${unknown}".`, { field: unknown })
  const first = check.Errors(value).First()
  const field = first?.path.replace(/^\//, '').replace(/\//g, '.') || undefined
  const allowed = (first?.schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf
    ?.map((s) => s.const)
    .filter((c) => c !== undefined)
  const expected = allowed?.length ? `one of: ${allowed.join(', ')}` : describe(first?.schema)
  throw invalid(`${field ?? 'The body'} must be ${expected}.`, {
    field: field ?? null,
    ...(allowed?.length ? { allowed } : {}),
  })
}

type ObjectSchema = {
  type?: string
  properties?: Record<string, TSchema>
  additionalProperties?: unknown
  anyOf?: TSchema[]
}

/** The first property a strict object schema does not know, as a dotted path (nested objects too). */
function unknownProperty(schema: TSchema, value: unknown, path = ''): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const s = schema as ObjectSchema
  if (s.anyOf) {
    for (const branch of s.anyOf) {
      if ((branch as ObjectSchema).type === 'object') return unknownProperty(branch, value, path)
    }
    return undefined
  }
  if (s.type !== 'object' || !s.properties) return undefined
  for (const [key, child] of Object.entries(value)) {
    const known = s.properties[key]
    const name = path ? `${path}.${key}` : key
    if (!known) {
      if (s.additionalProperties === false) return name
      continue
    }
    const nested = unknownProperty(known, child, name)
    if (nested) return nested
  }
  return undefined
}

function describe(schema: unknown): string {
  const anyOf = (schema as { anyOf?: unknown[] } | undefined)?.anyOf
  if (anyOf) return anyOf.map(describe).join(' or ')
  const type = (schema as { type?: string } | undefined)?.type
  if (type === 'integer') return 'a whole number'
  if (type === 'array') return 'an array'
  if (type === 'object') return 'an object'
  if (type === 'null') return 'null'
  return type ? `a ${type}` : 'valid'
}
