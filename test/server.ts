// A real server process for tests that need one (several processes, crashes, signals).

/** Starts `npm start`'s entry point as a real process on a free port; resolves when it listens. */
export async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let buffer = ''
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += new TextDecoder().decode(value)
    const match = /"api":"http:\/\/127\.0\.0\.1:(\d+)/.exec(buffer)
    if (match) {
      reader.releaseLock()
      void proc.stdout.pipeTo(new WritableStream()).catch(() => {})
      return { proc, base: `http://127.0.0.1:${match[1]}` }
    }
  }
  proc.kill()
  throw new Error(`server did not start: ${buffer}`)
}
