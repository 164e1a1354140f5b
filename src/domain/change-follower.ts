import type { Db } from '../db/client'

type Listener = (seq: number) => void

/**
 * Follows the change log (`item_events`, whose id only grows in commit order) with one cheap
 * query per interval, and tells this process's listeners which users' items changed. It
 * needs no shared memory and no in-process signal: a change made by any process on the same
 * database — or through a Turso primary — is seen at the next poll. It polls only while
 * someone listens.
 */
export class ChangeFollower {
  private last = -1
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly listeners = new Map<string, Set<Listener>>()
  private size = 0
  private polling = false

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
    let set = this.listeners.get(userId)
    if (!set) this.listeners.set(userId, (set = new Set()))
    set.add(listener)
    this.size++
    this.schedule()
    return () => {
      if (!set.delete(listener)) return
      this.size--
      if (set.size === 0) this.listeners.delete(userId)
      if (this.size === 0 && this.timer) clearTimeout(this.timer), (this.timer = undefined)
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

  get listenerCount(): number {
    return this.size
  }

  private schedule() {
    if (this.timer || this.polling || this.size === 0) return
    this.timer = setTimeout(() => void this.poll(), this.intervalMs)
  }

  private async poll() {
    this.timer = undefined
    this.polling = true
    try {
      await this.ready()
      const rows = await this.db.$query('SELECT id, user_id FROM item_events WHERE id > ? ORDER BY id LIMIT 1000', [this.last])
      const changed = new Map<string, number>()
      for (const r of rows) changed.set(String(r.user_id), Number(r.id))
      if (rows.length > 0) this.last = Number(rows[rows.length - 1]!.id)
      for (const [user, seq] of changed) for (const listener of this.listeners.get(user) ?? []) listener(seq)
    } catch {
      // A failed poll (database busy or closing) is retried at the next interval.
    } finally {
      this.polling = false
      this.schedule()
    }
  }

  close() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.listeners.clear()
    this.size = 0
  }
}
