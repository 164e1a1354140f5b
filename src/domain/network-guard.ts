import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

// The webhook network guard (CONTRACT 8): deliveries go to public addresses only, unless
// WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. Checked on the literal address or on every address a
// name resolves to, when an endpoint is registered and again before each delivery.

const V4_BLOCKED: [number, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
].map(([net, bits]) => [v4(net as string) ?? Number.NaN, bits as number])

function v4(address: string): number | null {
  const parts = address.split('.')
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null
  return parts.reduce((n, p) => n * 256 + Number(p), 0)
}

const inV4 = (n: number, net: number, bits: number) =>
  Math.floor(n / 2 ** (32 - bits)) === Math.floor(net / 2 ** (32 - bits))

/** IPv6 text → 8 groups, with an embedded dotted IPv4 tail expanded. */
function v6Groups(address: string): number[] | null {
  let text = (address.split('%')[0] ?? '').toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1]
  if (dotted) {
    const n = v4(dotted)
    if (n === null) return null
    text = `${text.slice(0, -dotted.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head, tail, extra] = text.split('::')
  if (extra !== undefined) return null
  const a = head ? head.split(':') : []
  const b = tail !== undefined ? (tail ? tail.split(':') : []) : []
  const missing = 8 - a.length - b.length
  if ((tail === undefined && missing !== 0) || missing < 0) return null
  const groups = [...a, ...Array(tail === undefined ? 0 : missing).fill('0'), ...b]
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null
  return groups.map((g) => parseInt(g, 16))
}

/** Whether an IP address is on the public internet (not loopback, private, link-local, multicast, reserved). */
export function isPublicAddress(address: string): boolean {
  const kind = isIP(address)
  if (kind === 4) {
    const n = v4(address)
    return n !== null && !V4_BLOCKED.some(([net, bits]) => inV4(n, net, bits))
  }
  if (kind !== 6) return false
  const groups = v6Groups(address)
  if (!groups) return false
  // Eight groups, as v6Groups guarantees.
  const [g0 = 0, g1 = 0, g2 = 0, , , g5 = 0, g6 = 0, g7 = 0] = groups
  const g = groups
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  if (g.slice(0, 6).every((x) => x === 0)) return false // :: and ::1, and IPv4-compatible
  if (g.slice(0, 5).every((x) => x === 0) && g5 === 0xffff) return isPublicAddress(embedded(g6, g7)) // IPv4-mapped
  if (g0 === 0x64 && g1 === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return isPublicAddress(embedded(g6, g7)) // NAT64
  if ((g0 & 0xfe00) === 0xfc00) return false // unique local
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return false // link-local, site-local
  if ((g0 & 0xff00) === 0xff00) return false // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false // documentation
  if (g0 === 0x2002) return isPublicAddress(embedded(g1, g2)) // 6to4
  return true
}

export type GuardResult = { ok: true; addresses: string[] } | { ok: false; reason: string }

/**
 * The addresses a webhook URL's host reaches, if all are allowed. A name that does not resolve,
 * or resolves to any address outside the public internet, is refused.
 */
export async function checkDestination(url: URL, allowPrivate: boolean): Promise<GuardResult> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, reason: 'must use http or https' }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (allowPrivate) return { ok: true, addresses: [host] }
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
    } catch {
      return { ok: false, reason: 'does not resolve' }
    }
    if (addresses.length === 0) return { ok: false, reason: 'does not resolve' }
  }
  const blocked = addresses.find((a) => !isPublicAddress(a))
  if (blocked)
    return {
      ok: false,
      reason: `reaches a loopback, private, link-local or multicast address (${blocked})`,
    }
  return { ok: true, addresses }
}

/**
 * How to reach `url` at an address the guard checked, so the connection cannot go elsewhere
 * than what was checked (a name re-resolved between the check and the connect could): the URL
 * with the address as host, the original `Host` header, and for https the original name for
 * SNI and the certificate check.
 */
export function pinnedTarget(
  url: URL,
  address: string,
): { target: URL; host: string; serverName?: string } {
  const target = new URL(url)
  if (isIP(url.hostname.replace(/^\[|\]$/g, ''))) return { target, host: url.host }
  target.hostname = isIP(address) === 6 ? `[${address}]` : address
  return {
    target,
    host: url.host,
    ...(url.protocol === 'https:' ? { serverName: url.hostname } : {}),
  }
}
