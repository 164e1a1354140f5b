// The bare-runtime baseline: Bun.serve + bun:sqlite, no framework, no auth, no validation.
// It answers the same 50-item page from the same rows as GET /api/saved/items, so the ratio
// service/baseline measures what our request path costs on top of the runtime and SQLite.
//   bun bench/baseline.ts <database file> <user id> <port>
import { Database } from 'bun:sqlite'

const [file, userId, port] = process.argv.slice(2)
const db = new Database(file!, { readonly: true })
const first = db.prepare(
  `SELECT id, type, status, workflow_status, title, summary, action_note, resolution_note, tags, requested_action,
          destination_kind, destination_name, claim_kind, claim_id, claim_name, lease_expires_at, created_at, updated_at
   FROM items WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
)
const after = db.prepare(
  `SELECT id, type, status, workflow_status, title, summary, action_note, resolution_note, tags, requested_action,
          destination_kind, destination_name, claim_kind, claim_id, claim_name, lease_expires_at, created_at, updated_at
   FROM items WHERE user_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
)

Bun.serve({
  port: Number(port),
  hostname: '127.0.0.1',
  reusePort: true,
  fetch(req) {
    const url = new URL(req.url)
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const cursor = url.searchParams.get('cursor')
    let rows: any[]
    if (cursor) {
      const [ms, id] = Buffer.from(cursor, 'base64url').toString().split(':')
      rows = after.all(userId!, Number(ms), id!, limit + 1)
    } else rows = first.all(userId!, limit + 1)
    const more = rows.length > limit
    const page = rows.slice(0, limit)
    const items = page.map((r) => ({
      id: r.id,
      type: r.type,
      status: r.status,
      workflow_status: r.workflow_status,
      title: r.title,
      summary: r.summary,
      action_note: r.action_note,
      resolution_note: r.resolution_note,
      tags: JSON.parse(r.tags),
      requested_action: r.requested_action,
      destination_kind: r.destination_kind,
      destination_name: r.destination_name,
      claim_status: 'available',
      claimed_by: null,
      lease_expires_at: null,
      created_at: new Date(r.created_at).toISOString(),
      updated_at: new Date(r.updated_at).toISOString(),
    }))
    const last = page[page.length - 1]
    return Response.json({
      items,
      next_cursor:
        more && last ? Buffer.from(`${last.created_at}:${last.id}`).toString('base64url') : null,
    })
  },
})
console.log(`baseline listening on ${port}`)
