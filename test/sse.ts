// A minimal Server-Sent Events reader for tests: real bytes off a real response body.

export interface SseEvent {
  id?: string
  event?: string
  data?: string
  comment?: string
}

export function sseReader(res: Response) {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const parsed: SseEvent[] = []
  const parse = () => {
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event: SseEvent = {}
      for (const line of block.split('\n')) {
        if (line.startsWith(':'))
          event.comment = (event.comment ? event.comment + '\n' : '') + line.slice(1).trim()
        else {
          const i = line.indexOf(':')
          const field = i < 0 ? line : line.slice(0, i)
          const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '')
          if (field === 'id' || field === 'event') event[field] = value
          else if (field === 'data')
            event.data = event.data === undefined ? value : `${event.data}\n${value}`
        }
      }
      parsed.push(event)
    }
  }
  return {
    /** The next event (or comment) matching `accept`, or an error after `timeoutMs`. */
    async next(
      accept: (e: SseEvent) => boolean = (e) => e.data !== undefined,
      timeoutMs = 5000,
    ): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const i = parsed.findIndex(accept)
        if (i >= 0) return parsed.splice(0, i + 1)[i]!
        parsed.length = 0
        const left = deadline - Date.now()
        if (left <= 0) throw new Error('no matching event in time')
        let timer: ReturnType<typeof setTimeout> | undefined
        const chunk = await Promise.race([
          reader.read(),
          new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left))),
        ])
        clearTimeout(timer)
        if (chunk === 'timeout') throw new Error('no matching event in time')
        if (chunk.done) throw new Error('stream ended')
        buffer += decoder.decode(chunk.value, { stream: true })
        parse()
      }
    },
    /** Data events, parsed. */
    async record(timeoutMs?: number) {
      const e = await this.next(undefined, timeoutMs)
      return { id: e.id!, event: e.event!, data: JSON.parse(e.data!) }
    },
    cancel: () => reader.cancel().catch(() => {}),
  }
}
