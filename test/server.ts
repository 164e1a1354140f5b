// A real server process for tests that need one (several processes, crashes, signals).

/**
 * Starts `npm start`'s entry point as a real process on a free port; resolves when it listens.
 * `output()` is everything the process has written so far, stdout and stderr, for tests about logs.
 */
export async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let stderr = ''
  void proc.stderr
    .pipeTo(
      new WritableStream({ write: (chunk) => void (stderr += new TextDecoder().decode(chunk)) }),
    )
    .catch(() => {})
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
      void proc.stdout
        .pipeTo(
          new WritableStream({
            write: (chunk) => void (buffer += new TextDecoder().decode(chunk)),
          }),
        )
        .catch(() => {})
      return {
        proc,
        base: `http://127.0.0.1:${match[1]}`,
        port: Number(match[1]),
        output: () => buffer + stderr,
      }
    }
  }
  proc.kill()
  throw new Error(`server did not start: ${buffer}${stderr}`)
}

/** Sends raw bytes over TCP and returns everything the server answers until it closes (or 3 s pass). */
export async function rawRequest(
  port: number,
  bytes: string,
): Promise<{ status: number; headers: string; body: string }> {
  let received = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => resolve(), 3000)
    void Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (socket) => void socket.write(bytes),
        data: (_socket, chunk) => void (received += new TextDecoder().decode(chunk)),
        close: () => (clearTimeout(timer), resolve()),
        error: (_socket, error) => (clearTimeout(timer), reject(error)),
      },
    }).then((socket) => setTimeout(() => socket.end(), 3000))
  })
  const [head = '', ...rest] = received.split('\r\n\r\n')
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0),
    headers: head,
    body: rest.join('\r\n\r\n'),
  }
}
