import { createHash } from 'node:crypto'
import { Value } from '@sinclair/typebox/value'
import type { TSchema } from 'elysia'
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool as ToolListing,
} from '@modelcontextprotocol/sdk/types.js'
import { claimantOf, scopesOf, type Caller } from '../domain/caller'
import type { Deps } from '../domain/deps'
import {
  completeIdempotencyKey,
  isIdempotencyKey,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
} from '../domain/idempotency'
import { getItem } from '../domain/items'
import { AppError, ERROR_CODES, type ErrorCode as AppErrorCode } from '../errors'
import { ErrorSchema } from '../http/schemas'
import { itemWithImageJson, restSpelling } from '../http/serialize'
import { TOOLS, type Tool } from './tools'

const INSTRUCTIONS = `Saved-items work queue. Loop: claim_next (keep lease.id) → do the work, calling lease_renew before the lease ends → item_complete with lease_id (or lease_release to give it back). lease_lost means the item is no longer yours: stop and claim_next again. Errors come back as structuredContent.error.code.`

/**
 * A schema as plain, compact JSON Schema for the listing, which every session reads into its
 * context. Two rewrites, same meaning for a JSON value: REST's enums (a union of string
 * literals) become `enum`, a third of the size; and Elysia's `t.Integer` (in REST's shared
 * schemas) loses the numeric-string alternative query strings need — in JSON an integer is a
 * number, and ajv would warn about the unknown `integer` format.
 */
const plain = (schema: TSchema) =>
  JSON.parse(JSON.stringify(schema), (_key, value) => {
    const anyOf = value?.anyOf
    if (!Array.isArray(anyOf)) return value
    const { anyOf: _, ...rest } = value
    if (
      anyOf.every(
        (b) => b?.type === 'string' && typeof b.const === 'string' && Object.keys(b).length === 2,
      )
    ) {
      return { ...rest, type: 'string', enum: anyOf.map((b) => b.const) }
    }
    if (anyOf.length === 2 && anyOf[0]?.type === 'string' && anyOf[0]?.format === 'integer')
      return { ...rest, ...anyOf[1] }
    return value
  }) as Record<string, unknown>

/**
 * The listing of a tool. The output schema admits the refusal shape too, because the SDK's client
 * validates every structuredContent, refusals included, against it (CONTRACT 9). MCP wants an
 * object schema at the top, hence `type: object` around the two alternatives.
 */
function listing(tool: Tool): ToolListing {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: plain(tool.input) as ToolListing['inputSchema'],
    outputSchema: { type: 'object', anyOf: [plain(tool.output), plain(ErrorSchema)] },
    annotations: { title: tool.title, ...tool.annotations },
  }
}
const LISTINGS = new Map(TOOLS.map((tool) => [tool.name, listing(tool)]))

function refusal(code: AppErrorCode, message: string, details?: unknown): CallToolResult {
  const error = details === undefined ? { code, message } : { code, message, details }
  return {
    isError: true,
    structuredContent: { error },
    content: [{ type: 'text', text: `${code}: ${message}` }],
  }
}

/** Our coded errors become data the agent can act on, field names spelled as in the arguments. */
function refusalOf(error: AppError): CallToolResult {
  const { message, details } = error.spelled(restSpelling)
  return refusal(error.code, message, details)
}

/** The first thing wrong with the arguments, named by its path: "lease_seconds: Expected integer." */
function argumentRefusal(tool: Tool, args: unknown): CallToolResult | null {
  if (Value.Check(tool.input, args)) return null
  const first = Value.Errors(tool.input, args).First()
  const where = first?.path ? first.path.replace(/^\//, '').replace(/\//g, '.') : 'arguments'
  // An enum is a union of literals, which TypeBox reports as "Expected union value": name the values.
  const values = (
    (first?.schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf ?? []
  ).map((b) => b.const)
  const why =
    values.length > 0 && values.every((v) => typeof v === 'string')
      ? `Expected one of ${values.join(', ')}`
      : (first?.message ?? 'Invalid value')
  return refusal('invalid_request', `${where}: ${why}.`, { field: where })
}

/** Same tool and arguments, key aside, in any property order → the same fingerprint. */
function fingerprint(tool: string, args: Record<string, unknown>): string {
  const { idempotency_key: _key, ...rest } = args
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v
  return createHash('sha256')
    .update(`mcp ${tool}\n${JSON.stringify(canonical(rest))}`)
    .digest('hex')
}

async function execute(
  deps: Deps,
  caller: Caller,
  tool: Tool,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  try {
    const structuredContent = await tool.run({ deps, caller, signal }, args)
    // Our own answer is checked against the schema we publish: drift is our bug, never the client's.
    if (!Value.Check(tool.output, structuredContent)) {
      deps.logger.error('mcp tool answer does not match its output schema', { tool: tool.name })
      return refusal('internal', 'Internal error.')
    }
    return { structuredContent, content: [{ type: 'text', text: tool.text(structuredContent) }] }
  } catch (error) {
    if (error instanceof AppError) return refusalOf(error)
    deps.logger.error('mcp tool failed', {
      tool: tool.name,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    })
    return refusal('internal', 'Internal error.')
  }
}

/**
 * `idempotency_key` (claim_next, item_complete) through the same store and rules as REST's
 * Idempotency-Key header (CONTRACT 7): scoped to the caller, the first result replayed, a key
 * reused with other arguments refused. Failures on our side are forgotten so a retry runs.
 */
async function executeOnce(
  deps: Deps,
  caller: Caller,
  tool: Tool,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const key = args.idempotency_key
  if (typeof key !== 'string') return execute(deps, caller, tool, args, signal)
  if (!isIdempotencyKey(key))
    return refusal(
      'invalid_request',
      'idempotency_key must be 1 to 255 printable ASCII characters.',
      { field: 'idempotency_key' },
    )
  const me = claimantOf(caller)
  const owner = `${me.kind}:${me.id}`
  try {
    const reservation = await reserveIdempotencyKey(deps, owner, key, fingerprint(tool.name, args))
    if (reservation.kind === 'replay') {
      const structuredContent = JSON.parse(reservation.answer.body) as Record<string, unknown>
      const refused = reservation.answer.status >= 400
      const error = structuredContent.error as { code: string; message: string } | undefined
      const text =
        refused && error ? `${error.code}: ${error.message}` : tool.text(structuredContent)
      return {
        structuredContent,
        content: [{ type: 'text', text }],
        isError: refused || undefined,
        _meta: { idempotent_replayed: true },
      }
    }
  } catch (error) {
    if (error instanceof AppError) return refusalOf(error)
    throw error
  }
  const result = await execute(deps, caller, tool, args, signal)
  const code = (result.structuredContent?.error as { code?: AppErrorCode } | undefined)?.code
  if (code === 'internal' || code === 'rate_limited') {
    await releaseIdempotencyKey(deps, owner, key)
  } else {
    const status = code ? ERROR_CODES[code].status : 200
    await completeIdempotencyKey(deps, owner, key, {
      status,
      headers: {},
      body: JSON.stringify(result.structuredContent),
    })
  }
  return result
}

/**
 * One MCP server for one request of one caller (stateless: nothing survives the request).
 * Tools use the low-level handlers rather than `registerTool`, so that every refusal — bad
 * arguments included, which `registerTool` would answer as bare text — carries a code, and so
 * the schemas can be REST's TypeBox schemas. The prompt and the resource template use the
 * high-level API.
 */
export function createMcpServer(deps: Deps, caller: Caller): McpServer {
  const mcp = new McpServer(
    { name: 'saved-items', title: 'Saved-Items Workflow API', version: '0.2.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
    },
  )
  const held = scopesOf(caller)
  const allowed = TOOLS.filter((tool) => tool.scopes.every((scope) => held.includes(scope)))

  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: allowed.flatMap((tool) => LISTINGS.get(tool.name) ?? []),
  }))
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // Unlisted tools still run: the domain refuses them with insufficient_scope, as REST would.
    const tool = TOOLS.find((candidate) => candidate.name === request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    const args = request.params.arguments ?? {}
    return argumentRefusal(tool, args) ?? executeOnce(deps, caller, tool, args, extra.signal)
  })

  mcp.registerPrompt(
    'work_inbox',
    {
      title: 'Work the inbox',
      description: 'How to work items from the queue with claims and leases.',
    },
    () => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              'Work through my saved-items inbox, one item at a time:',
              '1. Call claim_next (optionally with filters and wait_seconds). If item is null, the queue is empty: stop.',
              '2. Remember item.id and lease.id. Do what requested_action and action_note ask.',
              '3. If the work takes longer than the lease, call lease_renew with the lease_id before lease.expires_at.',
              '4. Record progress with item_add_note (with lease_id) if useful.',
              '5. Finish with item_complete (item_id, lease_id, resolution_note, and an idempotency_key so a retry is safe).',
              '   If you cannot finish, call lease_release (optionally retry_after_seconds) so another worker can take it.',
              '6. If any call answers lease_lost, the item is no longer yours: drop it and go back to step 1.',
            ].join('\n'),
          },
        },
      ],
    }),
  )

  mcp.registerResource(
    'saved-item',
    new ResourceTemplate('saved-item://{id}', { list: undefined }),
    {
      title: 'Saved item',
      description: 'One saved item as JSON (REST shape, with its signed image link).',
      mimeType: 'application/json',
    },
    async (uri, { id }) => {
      try {
        const item = await getItem(deps, caller, String(Array.isArray(id) ? id[0] : id))
        return {
          contents: [
            {
              uri: uri.href,
              mimeType: 'application/json',
              text: JSON.stringify(itemWithImageJson(item)),
            },
          ],
        }
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        // -32002 is MCP's "resource not found"; other refusals keep their code in the data.
        throw new McpError(
          error.code === 'not_found' ? -32002 : ErrorCode.InvalidRequest,
          error.message,
          { code: error.code },
        )
      }
    },
  )
  return mcp
}
