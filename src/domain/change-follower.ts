import type { Db, RawRow } from '../db/client'
import { CHANGE_SELECT, changeSeq, changeUser } from './change-record'

type Listener = (seq: number) => void
/** Receives the user's new change-log rows (CHANGE_SELECT, oldest first) after each poll that saw some. */
type RowListener = (rows: RawRow[]) => void

const BATCH = 1000

/**
 * Follows the change log (`item_events`, whose id only grows in commit order) with one cheap
 * query per interval, and tells this process's listeners which users' items changed. It
 * needs no shared memory and no in-process signal: a change made by any process on the same
 * database — or through a Turso primary — is seen at the next poll. It polls only while
 * someone listens.
 *
 * Two kinds of listener share the one query: `subscribe` (a wake-up with the newest seq, for
 * claim-next waiters) and `follow` (the rows themselves, joined with their items as they are
 * now, for live streams: a stream never queries the database for a live change).
 */
export class ChangeFollower {
  private last = -1
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly listeners = new Map<string, Set<Listener>>()
  private readonly followers = new Map<string, Set<RowListener>>()
  private size = 0
  private streams = 0
  private polling = false
  /** Renderings of a live row, shared by every stream of one caller (see `memo`). */
  private readonly rendered = new WeakMap<RawRow, Map<string, unknown>>()

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 50,
  ) {}

  /** The newest sequence number; from here on, every change reaches the listeners. */
  async ready(): Promise<number> {
    if (this.last < 0) {
      const [row] = await this.db.$query('SELECT coalesce(max(id), 0) AS seq FROM item_events')
      // Another ready() may have run meanwhile; never move backwards.
      this.last = Math.max(this.last, Number(row?.seq ?? 0))
    }
    return this.last
  }

  /** Calls `listener` after each poll that saw a change to one of `userId`'s items. */
  subscribe(userId: string, listener: Listener): () => void {
    return this.add(this.listeners, userId, listener, 'size')
  }

  /** Hands `listener` every new change-log row of `userId`'s items, in sequence order. */
  follow(userId: string, listener: RowListener): () => void {
    return this.add(this.followers, userId, listener, 'streams')
  }

  private add<L>(
    map: Map<string, Set<L>>,
    userId: string,
    listener: L,
    counter: 'size' | 'streams',
  ): () => void {
    let set = map.get(userId)
    if (!set) map.set(userId, (set = new Set()))
    set.add(listener)
    this[counter]++
    this.schedule()
    return () => {
      if (!set.delete(listener)) return
      this[counter]--
      if (set.size === 0 && map.get(userId) === set) map.delete(userId)
      if (this.size + this.streams === 0) {
        if (this.timer) clearTimeout(this.timer), (this.timer = undefined)
        // Nobody listens: the next listener starts from the log's end, not from a stale position.
        if (!this.polling) this.last = -1
      }
    }
  }

  /**
   * A change was just committed through this process: look now rather than at the next
   * interval. Other processes' changes still arrive by polling.
   */
  poke(): void {
    if (this.size === 0 || this.polling) return
    if (this.timer) clearTimeout(this.timer), (this.timer = undefined)
    void this.poll()
  }

  /**
   * One rendering of a live row per `key` (the reader's identity): a thousand streams of one
   * user render and encode each change once, not a thousand times. Dropped with the row.
   */
  memo<T>(row: RawRow, key: string, make: () => T): T {
    let byKey = this.rendered.get(row)
    if (!byKey) this.rendered.set(row, (byKey = new Map()))
    if (!byKey.has(key)) byKey.set(key, make())
    return byKey.get(key) as T
  }

  /** Claim-next waiters in this process (streams are counted apart). */
  get listenerCount(): number {
    return this.size
  }

  /** Open live streams (SSE, GraphQL subscriptions) in this process. */
  get streamCount(): number {
    return this.streams
  }

  private schedule(delay = this.intervalMs) {
    if (this.timer || this.polling || this.size + this.streams === 0) return
    this.timer = setTimeout(() => void this.poll(), delay)
  }

  private async poll() {
    this.timer = undefined
    this.polling = true
    let full = false
    try {
      await this.ready()
      // Rows only when a stream listens; wake-ups need no more than ids and users.
      const rows =
        this.streams > 0
          ? await this.db.$rows(`${CHANGE_SELECT} WHERE e.id > ? ORDER BY e.id LIMIT ${BATCH}`, [
              this.last,
            ])
          : await this.db.$rows(
              `SELECT id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, user_id FROM item_events WHERE id > ? ORDER BY id LIMIT ${BATCH}`,
              [this.last],
            )
      full = rows.length === BATCH
      const lastRow = rows.at(-1)
      if (lastRow) this.last = changeSeq(lastRow)
      const byUser = new Map<string, RawRow[]>()
      for (const row of rows) {
        const user = changeUser(row)
        let list = byUser.get(user)
        if (!list) byUser.set(user, (list = []))
        list.push(row)
      }
      for (const [user, list] of byUser) {
        const newest = list.at(-1)
        if (!newest) continue
        const seq = changeSeq(newest)
        for (const listener of this.listeners.get(user) ?? []) listener(seq)
        for (const listener of this.followers.get(user) ?? []) listener(list)
      }
    } catch {
      // A failed poll (database busy or closing) is retried at the next interval.
    } finally {
      this.polling = false
      if (this.size + this.streams === 0) this.last = -1
      // A full batch means more are waiting: read on at once.
      this.schedule(full ? 0 : this.intervalMs)
    }
  }

  close() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.listeners.clear()
    this.followers.clear()
    this.size = 0
    this.streams = 0
  }
}
