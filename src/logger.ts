import type { Config } from './config'

const ORDER = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  /** Whether lines of this level are written (to skip building them when not). */
  enabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean
}

/** One JSON line per event on stdout. Callers never pass secrets or tokens in `fields`. */
export function createLogger(
  level: Config['logLevel'],
  write: (line: string) => void = (l) => process.stdout.write(l + '\n'),
): Logger {
  const min = ORDER[level]
  const log = (lvl: keyof typeof ORDER) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }))
  }
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    enabled: (lvl) => ORDER[lvl] >= min,
  }
}
