// Ports for the benchmark servers, from the environment, so a run fits beside whatever else
// listens on the machine (another checkout's bench, the dev server).

/** `process.env[name]` as a TCP port, or `fallback`; anything else stops the run with a one-line message. */
export function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    console.error(`${name} must be a TCP port (1-65535), got "${raw}"`)
    process.exit(2)
  }
  return port
}
