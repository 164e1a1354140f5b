import { sql } from 'drizzle-orm'
import {
  sqliteTable,
  text,
  integer,
  real,
  index,
  uniqueIndex,
  primaryKey,
} from 'drizzle-orm/sqlite-core'

// Timestamps are integer milliseconds since the epoch (UTC): they sort and compare cheaply in
// the keyset cursor and serialise to ISO 8601 with millisecond precision at the edge.

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  createdAt: integer('created_at').notNull(),
  /** Quota counters (MAX_ITEMS_PER_USER, MAX_IMAGE_BYTES_PER_USER), kept in the same transaction as each item written or deleted. */
  itemCount: integer('item_count').notNull().default(0),
  imageBytes: integer('image_bytes').notNull().default(0),
  /** The item whose creation last passed the quota check: lets the statements of one batch see that it passed. */
  quotaMark: text('quota_mark'),
})

export const items = sqliteTable(
  'items',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    type: text('type', { enum: ['event', 'media', 'reference'] }).notNull(),
    status: text('status', { enum: ['queued', 'processing', 'extracted', 'failed'] }).notNull(),
    workflowStatus: text('workflow_status', { enum: ['pending', 'done'] }).notNull(),
    title: text('title'),
    summary: text('summary'),
    actionNote: text('action_note'),
    resolutionNote: text('resolution_note'),
    /** The tags as a JSON array, in the owner's order, for reading; `item_tags` serves filtering. */
    tags: text('tags').notNull().default('[]'),
    requestedAction: text('requested_action', {
      enum: ['calendar', 'reminder', 'save', 'workflow'],
    }),
    destinationKind: text('destination_kind'),
    destinationName: text('destination_name'),
    /** The claim holder. A claim is live only while `lease_expires_at` is in the future. */
    claimKind: text('claim_kind', { enum: ['agent_token', 'user'] }),
    claimId: text('claim_id'),
    claimName: text('claim_name'),
    leaseExpiresAt: integer('lease_expires_at'),
    /** The live lease's id (fencing token); a renewal keeps it, a fresh claim replaces it. */
    leaseId: text('lease_id'),
    /** Fresh claims since creation, reopen or the owner's revoke. */
    attempts: integer('attempts').notNull().default(0),
    /** A delayed release: claim next passes the item over until then. */
    availableAt: integer('available_at'),
    imageKey: text('image_key'),
    imageType: text('image_type'),
    imageBytes: integer('image_bytes'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * REST's rendering of the item as it reads while no lease is live (JSON), kept by triggers on
     * every write (migrations 0007, 0009): a list page is these documents joined inside the
     * database, with the claim tail replaced only where a lease is live (src/domain/item-pages.ts).
     */
    doc: text('doc'),
    /**
     * GraphQL's rendering of the same fields: each field's JSON value, separated by U+001F, in
     * the order of `GRAPHQL_VALUES` (src/domain/item-pages.ts), kept by the same triggers
     * (migration 0009). A GraphQL page of items is assembled from these values by key.
     */
    gql: text('gql'),
    /** Marks which PATCH wrote the row last, so the statements of one batch can see that it applied. */
    revision: text('revision'),
  },
  (t) => [
    // The items list: newest first, keyset on (created_at, id) within one user.
    index('items_user_created').on(t.userId, t.createdAt, t.id),
    // The inbox: only items with a requested action, per user and workflow status, oldest first.
    index('items_inbox')
      .on(t.userId, t.workflowStatus, t.createdAt, t.id)
      .where(sql`${t.requestedAction} IS NOT NULL`),
  ],
)

/** One row per (item, tag): the index that answers `tag` / `tags` filters without scanning JSON. */
export const itemTags = sqliteTable(
  'item_tags',
  {
    itemId: text('item_id').notNull(),
    userId: text('user_id').notNull(),
    tag: text('tag').notNull(),
    // Copied from the item (never changes) so the tag index can also serve the keyset order.
    createdAt: integer('created_at').notNull(),
    /** All of the item's tags as one bit set (src/domain/tag-signature.ts); NULL = unknown. */
    tagsSignature: integer('tags_signature'),
  },
  (t) => [
    primaryKey({ columns: [t.itemId, t.tag] }),
    // The signature rides in the index, so other tags are ruled out without leaving it.
    index('item_tags_user_tag_created').on(t.userId, t.tag, t.createdAt, t.itemId, t.tagsSignature),
  ],
)

/**
 * How many of a user's items carry each tag, kept by triggers on `item_tags` (migration 0013):
 * a filter by several tags walks the index of the rarest one.
 */
export const tagCounts = sqliteTable(
  'tag_counts',
  {
    userId: text('user_id').notNull(),
    tag: text('tag').notNull(),
    items: integer('items').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.tag] })],
)

/**
 * The change log: one row per change to an item, written in the same transaction as the change.
 * `id` only grows, in the order the database applied the writes (AUTOINCREMENT never reuses
 * one), so it is the feed's sequence. The workflow history is a view of it.
 */
export const itemEvents = sqliteTable(
  'item_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    itemId: text('item_id').notNull(),
    userId: text('user_id').notNull(),
    at: integer('at').notNull(),
    actorKind: text('actor_kind', { enum: ['agent_token', 'user'] }).notNull(),
    actorId: text('actor_id').notNull(),
    actorName: text('actor_name'),
    action: text('action').notNull(),
    from: text('from'),
    to: text('to'),
    note: text('note'),
  },
  (t) => [
    index('item_events_item').on(t.itemId, t.id),
    index('item_events_user').on(t.userId, t.id),
  ],
)

export const agentTokens = sqliteTable(
  'agent_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    name: text('name').notNull(),
    /** JSON array of scopes. */
    scopes: text('scopes').notNull(),
    /** SHA-256 of the raw secret, hex. The secret itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    tokenHint: text('token_hint').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [
    uniqueIndex('agent_tokens_hash').on(t.tokenHash),
    index('agent_tokens_user').on(t.userId, t.createdAt),
  ],
)

/** Token buckets shared by server processes (RATE_LIMIT_STORE=database): one row per caller. */
export const rateBuckets = sqliteTable('rate_buckets', {
  key: text('key').primaryKey(),
  tokens: real('tokens').notNull(),
  at: integer('at').notNull(),
})

/**
 * Idempotency keys (CONTRACT 7): per caller, kept 24 hours. `status` is null while the first
 * request runs; then the answer is stored for replay.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    owner: text('owner').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    status: integer('status'),
    headers: text('headers'),
    body: text('body'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.owner, t.key] }),
    index('idempotency_keys_created').on(t.createdAt),
  ],
)

/**
 * Webhook endpoints (CONTRACT 8). `secret` signs deliveries (Standard Webhooks) and is needed
 * in the clear for that. `enqueued_seq` is the change-log position up to which this endpoint's
 * deliveries are in the outbox: each process's dispatcher moves it forward in the same
 * transaction that writes the deliveries, so every change is enqueued once whichever process does it.
 */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    url: text('url').notNull(),
    /** JSON array of change actions; empty: every action. */
    actions: text('actions').notNull().default('[]'),
    description: text('description'),
    secret: text('secret').notNull(),
    createdAt: integer('created_at').notNull(),
    enabled: integer('enabled').notNull().default(1),
    disabledReason: text('disabled_reason'),
    /** Failed attempts in a row; 50 disable the endpoint. */
    failures: integer('failures').notNull().default(0),
    enqueuedSeq: integer('enqueued_seq').notNull(),
  },
  (t) => [
    index('webhooks_user').on(t.userId, t.createdAt),
    index('webhooks_enqueue').on(t.enabled, t.enqueuedSeq),
  ],
)

/**
 * The outbox: one row per (endpoint, change), its payload frozen when enqueued so every retry
 * sends the same bytes. A process claims due rows with one conditional UPDATE … RETURNING that
 * sets a lease, as items are claimed, so each attempt is made by exactly one process.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    webhookId: text('webhook_id').notNull(),
    userId: text('user_id').notNull(),
    seq: integer('seq').notNull(),
    action: text('action').notNull(),
    payload: text('payload').notNull(),
    /** pending (due at next_attempt_at), succeeded, failed (given up). */
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at').notNull(),
    leaseId: text('lease_id'),
    leaseExpiresAt: integer('lease_expires_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_change').on(t.webhookId, t.seq),
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
)

/** Every delivery attempt and how it ended: the endpoint's deliveries list. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    deliveryId: integer('delivery_id').notNull(),
    webhookId: text('webhook_id').notNull(),
    seq: integer('seq').notNull(),
    action: text('action').notNull(),
    attempt: integer('attempt').notNull(),
    /** succeeded; retrying (at next_attempt_at); failed (given up, or the endpoint was disabled). */
    status: text('status', { enum: ['succeeded', 'retrying', 'failed'] }).notNull(),
    responseStatus: integer('response_status'),
    error: text('error'),
    at: integer('at').notNull(),
    nextAttemptAt: integer('next_attempt_at'),
  },
  (t) => [index('webhook_attempts_webhook').on(t.webhookId, t.id)],
)

export type ItemRow = typeof items.$inferSelect
export type AgentTokenRow = typeof agentTokens.$inferSelect
