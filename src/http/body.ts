import type { TSchema, Static } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { invalid } from '../errors'

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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('The body must be a JSON object.')
  const first = check.Errors(value).First()
  const field = first?.path.replace(/^\//, '').replace(/\//g, '.') || undefined
  // An unknown property is reported by TypeBox on the object; name the property itself.
  const schemaAt = first?.schema as { additionalProperties?: boolean } | undefined
  if (first && schemaAt?.additionalProperties === false && typeof first.value === 'object' && first.value !== null) {
    const known = Object.keys((first.schema as { properties?: object }).properties ?? {})
    const extra = Object.keys(first.value).find((k) => !known.includes(k))
    if (extra) {
      const name = field ? `${field}.${extra}` : extra
      throw invalid(`Unknown property "${name}".`, { field: name })
    }
  }
  const allowed = (first?.schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf?.map((s) => s.const).filter((c) => c !== undefined)
  const expected = allowed?.length ? `one of: ${allowed.join(', ')}` : describe(first?.schema)
  throw invalid(`${field ?? 'The body'} must be ${expected}.`, { field: field ?? null, ...(allowed?.length ? { allowed } : {}) })
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
